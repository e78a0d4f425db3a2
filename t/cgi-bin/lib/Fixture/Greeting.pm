package Fixture::Greeting;
use v5.36;

# A module found through a script's own `use lib`
sub text () {'hello from a script-local library'}

1;
