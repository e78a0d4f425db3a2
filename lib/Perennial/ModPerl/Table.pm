package Perennial::ModPerl::Table;
use v5.36;
use Carp qw(croak);
use Perennial::Twins;

# APR::Table as mod_perl gives it: names are case-insensitive, a name may hold several values,
# entries keep the order they were added in, and the table is both an object (get, set, add,
# unset, merge, do ...) and a hash. Through the hash, $t->{Name} is the first value, and
# iterating (keys, each, values) gives a name once per value, with the value that belongs to
# that entry, as APR::Table's tied interface does. Tables are blessed into APR::Table, so code
# that checks the class finds the one it expects.

# An empty table, or a lazy one's with its source: in C (xs/Output.xs, loaded with
# Perennial::Executor::Output), or its Perl twin, which ties as perl does
Perennial::Twins::install_from('Perennial::Executor::Output', __PACKAGE__, 'tied_table');

sub pp_tied_table ($via, $source) {
    tie my %hash, 'Perennial::ModPerl::Table::Entries', $via, $source;
    return bless \%hash, 'APR::Table';
}

sub new ($class, @pairs) {
    my $table = tied_table(undef, undef);
    (tied %$table)->push_pairs(@pairs) if @pairs;    # As add adds them, in one call
    return $table;
}

# A table whose entries are made from a source when first needed: $via->pairs($source) gives
# them, and until then $via->value($source, $name) answers get (a request's headers_in, made
# from its PSGI environment: most handlers get a field or two, and the whole table cost a
# handler's request 15k instructions more)
sub lazy ($class, $via, $source) { tied_table($via, $source) }

# PerlSetVar and PerlAddVar's name => [values], as the table dir_config gives
sub from_vars ($class, $vars) {
    return $class->new(
        map {
            my $name = $_;
            map { ($name, $_) } @{$vars->{$name}}
        } sort keys %{$vars // {}}
    );
}

package APR::Table;    ## no critic (ProhibitMultiplePackages)
use v5.36;

# APR::Table::make($pool, $size): the pool and size mean nothing here
sub make ($class, @ignored) { Perennial::ModPerl::Table->new }

sub add   ($self, $name, $value) { (tied %$self)->push_entry($name, $value); return }
sub clear ($self)                { (tied %$self)->CLEAR;                     return }
sub copy  ($self, @pool)         { Perennial::ModPerl::Table->new($self->pairs) }

# compress(OVERLAP_TABLES_SET): one entry per name, where its first was, with the last value;
# OVERLAP_TABLES_MERGE: with the values joined by ", "
sub compress ($self, $flags = 0) {
    my $entries = tied %$self;
    my (%at, @list);
    for my $entry ($entries->entries) {
        my $key = lc $entry->[0];
        if (!defined $at{$key}) { $at{$key} = @list; push @list, $entry; next }
        my $kept = $list[$at{$key}];
        $kept->[1] = $flags ? "$kept->[1], $entry->[1]" : $entry->[1];
    }
    $entries->{list} = \@list;
    return;
}

# do(sub ($name, $value) { ...; 1 }, @names): every entry (or those of the names given) until
# the callback returns false; returns false when it stopped early
sub do ($self, $code, @names) {
    my %only = map { lc($_) => 1 } @names;
    for my $entry ((tied %$self)->entries) {
        next if @names && !$only{lc $entry->[0]};
        return 0 unless $code->(@$entry);
    }
    return 1;
}

# get reads the entries' list itself (a handler's usual call: a method of the entries' object on
# top cost 2k to 4k instructions)
sub get ($self, $name) {
    my $entries = tied %$self;
    if (my $via = $entries->{via}) {    # Not made yet: asked of the source
        my $value = $via->value($entries->{source}, $name);
        return wantarray ? (defined $value ? $value : ()) : $value;
    }
    my $key    = lc $name;
    my @values = map { $_->[1] } grep { lc $_->[0] eq $key } @{$entries->{list}};
    return wantarray ? @values : $values[0];
}

# merge: a name already there gets ", value" added to its first value; else it is added
sub merge ($self, $name, $value) {
    my $entries = tied %$self;
    return $self->add($name, $value) unless $entries->EXISTS($name);
    $entries->append_first($name, ", $value");
    return;
}

# overlay($other): a new table with the other table's entries, then this one's
sub overlay ($self, $other, @pool) { Perennial::ModPerl::Table->new($other->pairs, $self->pairs) }

# name => value for every entry, in order (Perennial's own, for writing a head)
sub pairs ($self) {
    map {@$_} (tied %$self)->entries;
}

sub set ($self, $name, $value) { (tied %$self)->replace($name, $value); return }

sub unset ($self, $name) { (tied %$self)->remove(lc $name); return }

# The hash behind the table: a list of [name, value] entries in order
package Perennial::ModPerl::Table::Entries;    ## no critic (ProhibitMultiplePackages)
use v5.36;
use Scalar::Util ();

# The entries, or (a lazy table's) where they will come from
sub TIEHASH ($class, $via = undef, $source = undef) {
    return bless {list => [], at => undef}, $class unless $via;
    return bless {list => undef, at => undef, via => $via, source => $source}, $class;
}

# The entries of a table made from a source (APR::Table's lazy), made now: only a lazy table
# has no list
sub _made ($self) {
    my ($via, $source) = delete @$self{qw(via source)};
    $self->{list} = [];
    $self->push_pairs($via->pairs($source));
    return $self->{list};
}

sub append_first ($self, $name, $more) {
    my ($entry) = grep { lc $_->[0] eq lc $name } @{$self->{list} // $self->_made};
    $entry->[1] .= $more;
}

sub entries ($self) {
    map { [@$_] } @{$self->{list} // $self->_made};
}

sub push_entry ($self, $name, $value) { push @{$self->{list} // $self->_made}, ["$name", "$value"] }

sub push_pairs ($self, @pairs) {
    push @{$self->{list} // $self->_made},
        map { ["$pairs[$_]", "$pairs[$_ + 1]"] } grep { $_ % 2 == 0 } 0 .. $#pairs;
    return;
}

sub remove ($self, $key) {
    $self->{list} = [grep { lc $_->[0] ne $key } @{$self->{list} // $self->_made}];
}

sub CLEAR ($self) {
    delete @$self{qw(via source)};
    $self->{list} = [];
    undef $self->{at};
}
sub DELETE ($self, $name) { $self->remove(lc $name) }

sub EXISTS ($self, $name) {
    scalar grep { lc $_->[0] eq lc $name } @{$self->{list} // $self->_made};
}

# A name that iteration gave (keys, each, values) carries its entry's place, so it fetches that
# entry's value, as APR::Table's names do; any other name fetches the first value
sub FETCH ($self, $name) {
    if (Scalar::Util::isdual($name)) {
        my $entry = ($self->{list} // $self->_made)->[$name + 0];
        return $entry->[1] if $entry && $entry->[0] eq "$name";
    }
    my ($entry) = grep { lc $_->[0] eq lc $name } @{$self->{list} // $self->_made};
    return $entry ? $entry->[1] : undef;
}

sub FIRSTKEY ($self) {
    $self->{at} = 0;
    return $self->_key;
}

sub NEXTKEY ($self, $last) {
    $self->{at}++;
    return $self->_key;
}
sub SCALAR ($self)                { scalar @{$self->{list} // $self->_made} }
sub STORE  ($self, $name, $value) { $self->replace($name, $value) }

# As apr_table_set: the first entry of the name keeps its place and its name's case and takes
# the value, the later ones go; with none, the entry is added at the end
sub replace ($self, $name, $value) {
    my $now = $self->{list} // $self->_made;
    if (!@$now) { push @$now, ["$name", "$value"]; return }    # The first entry (a new table's)
    my ($key, $done, @list) = (lc $name, 0);
    for my $entry (@$now) {
        if (lc $entry->[0] ne $key) { push @list, $entry; next }
        push @list, [$entry->[0], "$value"] unless $done++;
    }
    push @list, ["$name", "$value"] unless $done;
    $self->{list} = \@list;
    return;
}

sub _key ($self) {
    my $entry = ($self->{list} // $self->_made)->[$self->{at}]
        or return undef;    ## no critic (ProhibitExplicitReturnUndef) the end
    return Scalar::Util::dualvar($self->{at}, $entry->[0]);
}

1;

__END__

=head1 NAME

Perennial::ModPerl::Table - APR::Table: case-insensitive tables with repeated names

=head1 SYNOPSIS

    my $t = Perennial::ModPerl::Table->new;    # an APR::Table
    $t->add('Set-Cookie' => 'a=1');
    $t->add('set-cookie' => 'b=2');
    $t->{'X-Thing'} = 'yes';
    my @cookies = $t->get('SET-COOKIE');       # ('a=1', 'b=2')
    $t->do(sub ($name, $value) { print "$name: $value\n"; 1 });

=head1 DESCRIPTION

The tables of mod_perl's request object (C<headers_in>, C<headers_out>, C<err_headers_out>,
C<notes>, C<subprocess_env>, C<dir_config>), with the methods of APR::Table. Names are
case-insensitive and keep the case they were given; entries keep their order.

=head1 METHODS

=head2 add, set, unset, get, merge

    $t->merge(Vary => 'Accept');    # "Accept-Encoding, Accept" when Vary was there

C<get> gives the first value in scalar context and all of them in list context.

=head2 clear, compress, copy, do, overlay

    $t->compress(APR::Const::OVERLAP_TABLES_MERGE);    # one entry per name, values joined
    my $both = $t->overlay($other);                     # $other's entries, then $t's

=head2 make

    my $t = APR::Table::make($pool, 10);

=head2 pairs

    my @pairs = $t->pairs;    # name => value for every entry, in order

=cut
