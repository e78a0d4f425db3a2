# A library required by a relative path, as old CGI code does
my $counter = 0;

sub lib_counter_up {
    $counter++;
    return $counter;
}
1;
