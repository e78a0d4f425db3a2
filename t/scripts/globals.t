use v5.36;
use lib 't/lib';
use Test::More;
use Perennial::Executor::Globals;

# Perennial::Executor::Globals in this process, the C and the Perl twin alike (t/scripts/modes.t
# runs scripts that change the variables through a server): inside the guard's scope a script's
# globals are a new perl's, and after it the worker's are back, on every way out, when the
# worker had its own values too
my @twins = (['Perl', \&Perennial::Executor::Globals::pp_enter]);
push @twins, ['C', \&Perennial::Executor::Globals::xs_enter]
    if defined &Perennial::Executor::Globals::xs_enter;

## no critic (RequireLocalizedPunctuationVars) the worker's own values, set for the test
sub seen () {
    return join '|', map { $_ // 'undef' } $/, $,, $\, $", $;, $^W, "@INC", "@ARGV";
}

for (@twins) {
    my ($which, $enter) = @$_;
    local ($/, $,, $\, $", $;, $^W) = ('%', '+', '!', '-', ':', 1);
    local @INC  = ('/worker/lib');
    local @ARGV = ('worker');
    local $^T   = 1000;
    my $worker = seen();
    {
        my $guard = $enter->(['/script/lib'], ['isindex']);
        is seen(), join('|', "\n", 'undef', 'undef', ' ', "\034", 1, '/script/lib', 'isindex'),
            "$which: inside, a new perl's punctuation, the script's \@INC and \@ARGV, \$^W kept";
        ok time - $^T < 600, "$which: \$^T is the request's";
        ($/, $,, $\, $", $;, $^W) = (undef, 'a', 'b', 'c', 'd', 0);
        push @INC, '/leaked';
        @ARGV = ();
        $^T   = 0;
    }
    is seen(), $worker, "$which: after it, the worker's values, whatever the script set";
    is $^T,    1000,    "$which: and its \$^T";

    # A way out by die: put back as the scope unwinds
    eval {
        my $guard = $enter->([], undef);
        is "@ARGV", '', "$which: no ISINDEX words, an empty \@ARGV";
        $/ = 'x';
        die "out\n";
    };
    is $@,     "out\n", "$which: the error goes through";
    is seen(), $worker, "$which: and the worker's values are back after a die";

    # The worker's values as a new perl's: nothing to keep, and a script's changes still go
    ($/, $,, $\, $", $;) = ("\n", undef, undef, ' ', "\034");
    {
        my $guard = $enter->(\@INC, undef);
        ($/, $,, $\) = (undef, ',', "\n");
    }
    is_deeply [$/, $,, $\], ["\n", undef, undef], "$which: a new perl's values, put back as such";

    # What a request did to its @INC is not the next one's (the C keeps an array per script's
    # list, and makes it again when a request changed it)
    my $list    = ['/a', '/b'];
    my @changes = (
        ['an element set',     sub { $INC[0] = '/changed' }],
        ['an element added',   sub { push @INC, '/more' }],
        ['the array emptied',  sub { @INC = () }],
        ['an element changed', sub { $INC[1] .= 'x' }],
        [   'a hook added',
            sub {
                unshift @INC, sub {return}
            }
        ],
    );
    for (@changes) {
        my ($what, $change) = @$_;
        { my $guard = $enter->($list, undef); $change->() }
        my $guard = $enter->($list, undef);
        is "@INC", '/a /b', "$which: $what in a request, the next has the script's \@INC";
    }

    # A script that puts a read-only value in a variable's place (*\ = \"..."): the worker's
    # own variable is put back, and the next request starts as a new perl
    {
        my $guard = $enter->([], undef);
        no strict 'refs';    ## no critic (ProhibitNoStrict) main::'s globs, as a script names them
        *{'main::\\'} = \"\n";
        *{'main::,'}  = \'x';
    }
    ok eval { ($\, $,) = (undef, undef); 1 },
        "$which: a variable made read-only is the worker's again";
    {
        my $guard = $enter->([], undef);
        is_deeply [$\, $,], [undef, undef], "$which: and the next request has a new perl's";
    }

    # $@: emptied for the script; the C puts the worker's back (perl keeps $@ from a DESTROY)
    $@ = 'before';
    {
        my $guard = $enter->([], undef);
        is $@, '', "$which: \$\@ is empty for the script";
        $@ = 'left';
    }
    is $@, 'before', "$which: the worker's \$\@ after it" if $which eq 'C';
}

eval { Perennial::Executor::Globals::enter('not an array', undef) };
like $@, qr/array/, 'an @INC that is not an array is refused';
done_testing;
