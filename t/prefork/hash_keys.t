use v5.36;
use lib 't/lib';
use Test::More;
use File::Path ();
use Perennial::HashKeys;
use Perennial::Test qw(scratch_dir slurp write_file);

# The hash keys Perennial's code names are made together before its modules compile
# (Perennial::HashKeys), so that a worker's changes to their counts copy few of the manager's
# pages: which words a module's text gives, and that bin/perennial loads it first

my $dir = scratch_dir();

subtest 'the words a module uses as hash keys' => sub {
    my $file = write_file("$dir/Sample.pm", <<'PM');
package Sample;
my $x = $self->{plain} + $env->{'psgi.input'} + $h{ "spaced" };
my %h = (bare => 1, 'quoted.key' => 2, "double" =>3, $var => 4);
my ($a, $b) = @$self{qw(slice_one slice_two)};
my @list = qw[bracketed words];
my @more = qw<angled> ; my %t = ('content-type' => 1); $h{'transfer-encoding'} = 1;

=head2 pod_before_end

$pod->{not_this_either}

=cut

call(x => 1) if $y->{z}[0]{deep};
my $code = sub { return 1 };    # a block is not a key
1;
__END__
=head1 NAME
$pod->{not_this} and pod_key => 1
PM
    my %got = map { ($_ => 1) } Perennial::HashKeys::keys_named_in($file);
    for my $key (
        qw(plain psgi.input spaced bare quoted.key double slice_one slice_two bracketed words x z deep
        angled content-type transfer-encoding)
        )
    {
        ok $got{$key}, "$key";
    }
    ok !$got{$_}, "not $_" for qw(not_this pod_key not_this_either var return type);
};

subtest 'every module of Perennial is read, and yields keys' => sub {
    my @modules = Perennial::HashKeys::_modules('lib/Perennial');
    ok((grep {m{/Connection\.pm\z}} @modules),           'Connection');
    ok((grep {m{/Executor/Environment\.pm\z}} @modules), 'one a level down');
    ok((grep {m{/HTTP/Core\.pm\z}} @modules),            'HTTP::Core');
    my %keys = map { ($_ => 1) } map { Perennial::HashKeys::keys_named_in($_) } @modules;
    ok $keys{$_}, "a key the request path uses: $_"
        for qw(keep_alive psgi.input REQUEST_METHOD SCRIPT_NAME stopping);
};

subtest 'the keys are held from the import on, wherever Perennial is installed' => sub {
    cmp_ok Perennial::HashKeys::held(), '>', 1000, 'over a thousand, here';
    my $copy = "$dir/a dir [with] spaces";
    File::Path::make_path("$copy/lib");
    system('cp', '-R', 'lib/Perennial', 'lib/Perennial.pm', "$copy/lib/") == 0 or die "cp: $?";
    my $held = qx{$^X "-I$copy/lib" -MPerennial::HashKeys -e 'print Perennial::HashKeys::held()'};
    is $held, Perennial::HashKeys::held(), 'the same from a copy in a directory with a space';
};

subtest 'bin/perennial loads it before the rest of Perennial' => sub {
    my @uses = slurp('bin/perennial') =~ /^use (Perennial[\w:]*)/mg;
    is $uses[0], 'Perennial::HashKeys', 'the first of its modules';
};

done_testing;
