package Fixture::Ledger;
use v5.36;

# A module with an END block that empties its state, as Log::Log4perl's does: at the end of a
# CGI process that is harmless, but run after a request it leaves the next one with nothing
our $OPEN = 1;

sub entry () { $OPEN ? 'ledger open' : 'ledger closed by its END block' }

END { $OPEN = 0 }

1;
