# Required by a library: followed too
sub words { my ($w) = @_; my $n = 0; $n++; return ucfirst $w }
1;
