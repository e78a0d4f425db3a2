# A library that only reads its file-level variable, set once as it loads
require "./lib_words.pl";
my $greeting = words('hello');

sub greeting { return $greeting }
1;
