# A library that counts in its file-level variables: loaded once per worker, they keep counting
my $visitors = 0;
my %seen;

sub next_visitor {
    my ($name) = @_;
    $seen{$name // ''} = 1;
    return ++$visitors;
}
1;
