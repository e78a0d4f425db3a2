package Perennial::HashKeys;
use v5.36;
use File::Find ();

# Perl keeps one copy of each hash key for the whole process, in its shared string table, with
# a count of the hashes that hold it. A worker that puts a key in a hash of its own (an object,
# a request's environment) raises that count and lowers it again, and the page the key lies on
# becomes the worker's own copy, as every page a worker writes to. A key lies where it was
# first named, in the middle of whichever module compiled first with it: a worker's first
# requests copied hundreds of pages that way. Named here first, before the rest of Perennial
# compiles, the keys its code and a request's environment use lie together, in a few pages.

my %KEYS;    # Held for the life of the process: a key whose count falls to 0 is freed

# The variables of a request's environment that come from headers clients commonly send (the
# CGI/1.1 ones are in Perennial's own code)
my @HEADERS = qw(HTTP_ACCEPT HTTP_ACCEPT_CHARSET HTTP_ACCEPT_ENCODING HTTP_ACCEPT_LANGUAGE
    HTTP_AUTHORIZATION HTTP_CACHE_CONTROL HTTP_CONNECTION HTTP_COOKIE HTTP_DNT HTTP_FORWARDED
    HTTP_HOST HTTP_IF_MODIFIED_SINCE HTTP_IF_NONE_MATCH HTTP_ORIGIN HTTP_PRAGMA HTTP_RANGE
    HTTP_REFERER HTTP_UPGRADE_INSECURE_REQUESTS HTTP_USER_AGENT HTTP_X_FORWARDED_FOR
    HTTP_X_FORWARDED_PROTO HTTP_X_REQUESTED_WITH);

sub import ($class) {
    return if %KEYS;
    my $top = __FILE__ =~ s{\.pm\z}{}r =~ s{/[^/]+\z}{}r;    # lib/Perennial
    $KEYS{$_} = undef for @HEADERS, map { keys_named_in($_) } _modules($top);
    return;
}

# How many keys are held (none before the import)
sub held () { scalar keys %KEYS }

# The hash keys a module's code names: subscripts ({name}, {'psgi.input'}), the left of a =>,
# and the words of a qw() (hash slices); not its POD
sub keys_named_in ($file) {
    open(my $fh, '<', $file) or return;
    my $code = do { local $/; <$fh> };
    $code =~ s/^__END__\n.*//ms;
    $code =~ s/^=[a-zA-Z].*?(?:^=cut\b[^\n]*\n|\z)//msg;
    my $word = qr/[A-Za-z_][\w.-]*/;
    return (
        $code =~ /\{\s*['"]?($word)['"]?\s*\}/g,
        _before_fat_commas($code),
        map      {/($word)/g}
            grep {defined}
            $code
            =~ m{\bqw\s*(?:\(([^)]*)\)|\[([^\]]*)\]|\{([^\}]*)\}|<([^>]*)>|/([^/]*)/|!([^!]*)!|\|([^|]*)\|)}g
    );
}

# The word before each =>, read backwards from it: a pattern that ends at the => has to be
# tried at every position of the text, 20 times slower. A variable before it ($var =>) is not a
# key of the code's own
sub _before_fat_commas ($code) {
    my @words;
    while ($code =~ /=>/g) {
        my $at   = pos($code) - 2;
        my $from = $at > 64 ? $at - 64 : 0;
        my $back = reverse substr $code, $from, $at - $from;
        push @words, scalar reverse($1 // $2)
            if $back =~ /\A\h*(?:['"]([\w.-]*[A-Za-z_])|([\w.]*[A-Za-z_])(?![\w.\$\@%]))/;
    }
    return @words;
}

# Perennial's modules, in a stable order
sub _modules ($top) {
    my @files;
    File::Find::find({wanted => sub { push @files, $_ if /\.pm\z/ }, no_chdir => 1}, $top);
    @files = sort @files;
    return @files;
}

1;

__END__

=head1 NAME

Perennial::HashKeys - the hash keys Perennial uses, made together before its modules compile

=head1 SYNOPSIS

    use Perennial::HashKeys;    # first, in bin/perennial
    use Perennial::CLI;

=head1 DESCRIPTION

Every hash key lives once per process in perl's shared string table, with a count of the
hashes holding it, which a worker raises and lowers as its requests make objects and
environments: each such write copies the key's page into the worker's own memory. Loaded
before the rest of Perennial, this module names every key that Perennial's modules name (and
the environment variables of common request headers), so that those keys lie together in a
few pages instead of in every module's. It makes no difference to what any code does.

=head1 FUNCTIONS

=head2 keys_named_in

    my @keys = Perennial::HashKeys::keys_named_in('lib/Perennial/Connection.pm');

The words a module's code uses as hash keys: subscripts, the left of C<< => >>, and the words
of C<qw()> lists (hash slices take them). POD after C<__END__> is not read.

=head1 SEE ALSO

"A worker's memory" in docs/design-notes.md; C<bench/memory.pl>.

=cut
