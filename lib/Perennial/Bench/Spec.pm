package Perennial::Bench::Spec;
use v5.36;
use File::Spec ();
use Perennial::Config::Apache;

# A benchmark specification in the config file's syntax: what to request, how hard, and which
# settings to vary. Errors name the file and line, as the server's config does.

my %ONE = (
    config    => qr/./,
    requests  => qr/\A[1-9]\d{0,6}\z/,
    duration  => qr/\A[1-9]\d{0,2}\z/,
    warmup    => qr/\A\d{1,6}\z/,
    timeout   => qr/\A[1-9]\d{0,3}\z/,
    tool      => qr/\A(?:ab|wrk)\z/,
    keepalive => qr/\A(?:on|off)\z/i,
    title     => qr/./,
);
my $MAX_RUNS = 200;

sub load ($class, $file) {
    my $path = File::Spec->rel2abs($file);
    my ($items, $errors) = Perennial::Config::Apache->parse_file($path);
    die join("\n", @$errors) . "\n" if @$errors;
    my $dir  = (File::Spec->splitpath($path))[1] =~ s{/\z}{}r;
    my $self = bless {file => $path, urls => [], concurrency => [], vary => [], set => []}, $class;
    my @err;
    for my $item (@$items) {
        my $err = $item->{section} ? "<$item->{section}> has no meaning here" : $self->_item($item);
        push @err, "$item->{file} line $item->{line}: $err" if $err;
    }
    push @err, "$path: no URL given" unless @{$self->{urls}};
    push @err, "$path: give Requests or Duration, not both"
        if defined $self->{requests} && defined $self->{duration};
    die join("\n", @err) . "\n"                                  if @err;
    $self->{config} = File::Spec->rel2abs($self->{config}, $dir) if defined $self->{config};
    return $self->_defaults;
}

# A spec made in code (perennial tune): the same keys as the file's, in lower case
sub new ($class, %args) {
    my $self = bless {urls => [], concurrency => [], vary => [], set => [], file => '-', %args},
        $class;
    return $self->_defaults;
}

sub _defaults ($self) {
    $self->{concurrency} = [1] unless @{$self->{concurrency}};
    $self->{tool}     //= defined $self->{duration} ? 'wrk' : 'ab';
    $self->{requests} //= 1000 unless defined $self->{duration};
    $self->{duration} //= 10;
    $self->{warmup}   //= 50;
    $self->{timeout}  //= 60;
    my ($top) = sort { $b <=> $a } @{$self->{concurrency}};
    die "$self->{file}: Requests $self->{requests} is fewer than Concurrency $top: "
        . "ab cannot have more clients than requests\n"
        if $self->{tool} eq 'ab' && defined $self->{requests} && $self->{requests} < $top;
    my $runs = $self->combinations * @{$self->{urls}} * @{$self->{concurrency}};
    die "$self->{file}: $runs measurements; at most $MAX_RUNS in one run\n" if $runs > $MAX_RUNS;
    return $self;
}

# Every combination of the varied settings: [[Directive, value], ...] each
sub combinations ($self) {
    my @combos = ([]);
    for my $v (@{$self->{vary}}) {
        @combos = map {
            my $c = $_;
            map { [@$c, [$v->[0], $_]] } @{$v->[1]}
        } @combos;
    }
    return @combos;
}

sub concurrency ($self) { @{$self->{concurrency}} }
sub config      ($self) { $self->{config} }
sub duration    ($self) { $self->{duration} }
sub file        ($self) { $self->{file} }
sub fixed       ($self) { @{$self->{set}} }
sub keepalive   ($self) { lc($self->{keepalive} // 'off') eq 'on' }
sub requests    ($self) { $self->{requests} }
sub timeout     ($self) { $self->{timeout} }
sub title       ($self) { $self->{title} }
sub tool        ($self) { $self->{tool} }
sub urls        ($self) { @{$self->{urls}} }

sub varied ($self) {
    map { $_->[0] } @{$self->{vary}};
}
sub warmup ($self) { $self->{warmup} }

# The directives that collect lists; each returns an error or nothing
my %LISTS = (
    url => sub ($self, @args) {
        return 'URL takes one or more paths (/x) or http:// URLs' unless @args;
        for (@args) { return "URL '$_' is not a path or an http:// URL" unless m{\A(?:/|http://)} }
        push @{$self->{urls}}, @args;
        return;
    },
    concurrency => sub ($self, @args) {
        return 'Concurrency takes one or more numbers from 1 to 1000'
            if !@args || grep { !/\A[1-9]\d{0,2}\z/ && $_ ne '1000' } @args;
        push @{$self->{concurrency}}, @args;
        return;
    },
    vary => sub ($self, @args) {
        return 'Vary takes a directive and two or more values' if @args < 3;
        my $directive = shift @args;
        push @{$self->{vary}}, [$directive, \@args];
        return;
    },
    set => sub ($self, @args) {
        return 'Set takes a directive and its value' if @args < 2;
        push @{$self->{set}}, [shift @args, join ' ', @args];
        return;
    },
);

sub _item ($self, $item) {
    my $name = lc $item->{name};
    my @args = @{$item->{args}};
    return $LISTS{$name}->($self, @args) if $LISTS{$name};
    my $valid = $ONE{$name}
        or return "unknown directive '$item->{name}' "
        . '(URL, Concurrency, Requests, Duration, Warmup, Vary, Set, Config, Tool, KeepAlive, Timeout, Title)';
    return "$item->{name} takes one value" if @args != 1 && $name ne 'title';
    my $value = join ' ', @args;
    return "$item->{name}: '$value' is not valid" unless $value =~ $valid;
    $self->{$name} = $value;
    return;
}

1;

__END__

=head1 NAME

Perennial::Bench::Spec - the test specification of perennial bench

=head1 SYNOPSIS

    # heavy.bench
    Title       MaxClients on the heavy script
    Config      perennial.conf
    URL         /registry/heavy.pl
    Concurrency 16
    Requests    2000
    Warmup      100
    Vary        MaxClients 1 2 4 8 16
    Set         MaxRequestsPerChild 0

    my $spec = Perennial::Bench::Spec->load('heavy.bench');

=head1 DESCRIPTION

The directives, one per line in the config file's syntax (see L<Perennial::Manual::Tuning>):
C<URL> (paths on the server started, or full URLs with C<--target>), C<Concurrency>,
C<Requests> or C<Duration> (seconds), C<Warmup> (requests before each measurement),
C<Vary DIRECTIVE VALUE...> (repeatable: every combination gets its own server), C<Set
DIRECTIVE VALUE>, C<Config> (the server's config file, relative to the spec), C<Tool ab|wrk>,
C<KeepAlive On|Off> (ab's C<-k>), C<Timeout> (seconds per request) and C<Title>. At most 200
measurements in one run.

=head1 METHODS

=head2 combinations

    for my $combo ($spec->combinations) { ... }    # [[MaxClients => 4], [KeepAlive => 'Off']]

=head2 new

    my $spec = Perennial::Bench::Spec->new(config => $conf, urls => ['/x'], concurrency => [8],
        requests => 500, vary => [[MaxClients => [1, 2, 4]]], set => [[LogLevel => 'warn']]);

=head2 load

    my $spec = Perennial::Bench::Spec->load($file);

=cut
