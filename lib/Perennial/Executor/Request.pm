package Perennial::Executor::Request;
use v5.36;
use Scalar::Util ();
use Perennial::Executor::Request::Table;

# The request object old mod_perl scripts ask for: `Apache->request` (mod_perl 1) and
# `Apache2::RequestUtil->request` (mod_perl 2) return one for the script request running now,
# with the methods such scripts use: the request (method, uri, args, headers_in, path_info,
# filename ...), the response (content_type, status, headers_out, err_headers_out, no_cache,
# send_http_header, print, rflush) and logging. Headers set through it become the response's
# head; a script that prints its own CGI header block works as before. The object is only
# built when a script asks for it.

my $NOW;    # [env, hit, output, log] of the script request running, or undef

sub begin ($class, @request) { $NOW = \@request }
sub end   ($class)           { undef $NOW }

# Apache->request and Apache2::RequestUtil->request
sub current ($class, @ignored) {
    return undef unless $NOW;    ## no critic (ProhibitExplicitReturnUndef) mod_perl's answer
    return $NOW->[4] //= $class->_new(@$NOW[0 .. 3]);
}

sub _new ($class, $env, $hit, $out, $log) {
    my $self = bless {
        env             => $env,
        hit             => $hit,
        out             => $out,
        log             => $log,
        headers_in      => Perennial::Executor::Request::Table->new,
        headers_out     => Perennial::Executor::Request::Table->new,
        err_headers_out => Perennial::Executor::Request::Table->new,
        notes           => {},
        pnotes          => {},
    }, $class;
    for my $key (grep {/\AHTTP_/} keys %$env) {
        my $name = join '-', map {ucfirst} split /_/, lc substr $key, 5;
        $self->{headers_in}->add($name, $env->{$key});
    }
    $self->{headers_in}->add('Content-Type',   $env->{CONTENT_TYPE})   if $env->{CONTENT_TYPE};
    $self->{headers_in}->add('Content-Length', $env->{CONTENT_LENGTH}) if $env->{CONTENT_LENGTH};

    # The output asks for the head when the script first prints; weakly, so no cycle is left
    Scalar::Util::weaken(my $weak = $self);
    $out->head_from(
        sub { $weak && $weak->{head_set} && !$weak->{head_sent}++ ? $weak->_fields : () });
    return $self;
}

sub args ($self) {
    my $query = $self->{env}{QUERY_STRING} // '';
    return $query unless wantarray;
    return map { tr/+/ /r =~ s/%([0-9A-Fa-f]{2})/chr hex $1/ger } map { split /=/, $_, 2 }
        split /[&;]/, $query;
}

sub connection ($self) { Perennial::Executor::Request::Connection->new($self->{env}) }

sub content_type ($self, @type) {
    return $self->{content_type} unless @type;
    $self->{head_set} = 1;
    return $self->{content_type} = $type[0];
}

# PerlSetVar and PerlAddVar of the sections: one value, or all of them in list context; with
# no key, a table of them all
sub dir_config ($self, $key = undef) {
    my $vars = $self->{env}{'perennial.dir_config'} // {};
    if (defined $key) {
        my $values = $vars->{$key} or return;
        return wantarray ? @$values : $values->[0];
    }
    my $table = Perennial::Executor::Request::Table->new;
    for my $name (sort keys %$vars) { $table->add($name, $_) for @{$vars->{$name}} }
    return $table;
}

sub err_headers_out ($self)        { $self->{head_set} = 1; $self->{err_headers_out} }
sub filename        ($self)        { $self->{hit}{file} }
sub header_in       ($self, $name) { $self->{headers_in}->get($name) }

sub header_out ($self, $name, @value) {
    return $self->{headers_out}->get($name) unless @value;
    $self->{head_set} = 1;
    $self->{headers_out}->set($name, $value[0]);
    return $value[0];
}
sub headers_in  ($self) { $self->{headers_in} }
sub headers_out ($self) { $self->{head_set} = 1; $self->{headers_out} }
sub hostname ($self) { ($self->{env}{HTTP_HOST} // $self->{env}{SERVER_NAME} // '') =~ s/:\d+\z//r }
sub is_initial_req ($self)      {1}
sub log_error ($self, @message) { $self->{log}->error("$self->{hit}{file}: " . join '', @message) }
sub method    ($self)           { $self->{env}{REQUEST_METHOD} }

sub no_cache ($self, $on = 1) {
    $self->{head_set} = 1;
    return $self->{no_cache} = $on;
}
sub notes     ($self) { $self->{notes} }
sub path_info ($self) { $self->{hit}{path_info} }
sub pnotes    ($self) { $self->{pnotes} }

sub print ($self, @list) {
    $self->send_http_header if $self->{head_set} && !$self->{head_sent};
    return print STDOUT @list;
}

sub printf   ($self, $format, @list) { $self->print(sprintf $format, @list) }
sub protocol ($self)                 { $self->{env}{SERVER_PROTOCOL} }

# No signature: the buffer is the caller's own variable, reached through @_
sub read {    ## no critic (RequireArgUnpacking)
    my ($self, undef, $length, $offset) = @_;
    return CORE::read(STDIN, $_[1], $length, $offset // 0);
}

sub rflush ($self) { $self->{out}->flush; 1 }

sub send_http_header ($self, $type = undef) {
    $self->content_type($type) if defined $type;
    $self->{head_sent} = 1;
    $self->{out}->set_head($self->_fields);
    return;
}

sub status ($self, @status) {
    return $self->{status} // 200 unless @status;
    $self->{head_set} = 1;
    return $self->{status} = $status[0];
}

sub the_request ($self) {
    return join ' ', @{$self->{env}}{qw(REQUEST_METHOD REQUEST_URI SERVER_PROTOCOL)};
}
sub unparsed_uri ($self)   { $self->{env}{REQUEST_URI} }
sub uri          ($self)   { ($self->{env}{REQUEST_URI} // '') =~ s/\?.*//sr }
sub warn ($self, @message) { $self->{log}->warn("$self->{hit}{file}: " . join '', @message) }

# The head as set so far, as the fields a script would have printed: the output reads them
# by the same rules (a Location without a Status redirects, no CR or LF in a value)
sub _fields ($self) {
    return (
        (defined $self->{status} ? (Status => $self->{status}) : ()),
        'Content-Type' => $self->{content_type} // 'text/html',
        ($self->{no_cache} ? (Pragma => 'no-cache', 'Cache-Control' => 'no-cache') : ()),
        $self->{headers_out}->pairs,
        $self->{err_headers_out}->pairs
    );
}

package Perennial::Executor::Request::Connection;    ## no critic (ProhibitMultiplePackages)

sub new         ($class, $env) { bless {env => $env}, $class }
sub client_ip   ($self)        { $self->{env}{REMOTE_ADDR} }
sub remote_ip   ($self)        { $self->{env}{REMOTE_ADDR} }
sub remote_host ($self)        { $self->{env}{REMOTE_HOST} // $self->{env}{REMOTE_ADDR} }

# The names old scripts use: mod_perl 1's Apache->request and mod_perl 2's
# Apache2::RequestUtil->request, with the modules they `use` marked as loaded (the real ones
# only work inside Apache)
package Apache2::RequestUtil;    ## no critic (ProhibitMultiplePackages)
sub request ($class, @ignored) { Perennial::Executor::Request->current }

package Apache;                  ## no critic (ProhibitMultiplePackages)
sub request ($class, @ignored) { Perennial::Executor::Request->current }

BEGIN {
    $INC{$_} //= __FILE__ for qw(Apache.pm Apache2/RequestUtil.pm Apache2/RequestRec.pm
        Apache2/RequestIO.pm Apache2/Connection.pm Apache2/Log.pm APR/Table.pm);
}

1;

__END__

=head1 NAME

Perennial::Executor::Request - the $r of old mod_perl scripts, for resident scripts

=head1 SYNOPSIS

    # In a script run by Registry or PerlRun:
    my $r = Apache2::RequestUtil->request;    # or Apache->request
    $r->content_type('text/plain');
    $r->headers_out->set('X-Served-By' => 'Perennial');
    $r->print("Hello ", $r->args ? 'with' : 'without', " a query\n");

=head1 DESCRIPTION

Scripts written for mod_perl often ask for the request object instead of (or beside) printing
CGI headers. This gives them one for the script request that is running, with the methods
such scripts use most; headers and status set through it become the response's head when the
script first prints, calls C<send_http_header>, C<print> or C<rflush>. Outside a script request
C<request> returns undef. C<dir_config> reads the sections' C<PerlSetVar> and C<PerlAddVar>.
It is not mod_perl: handlers, filters, subrequests and the rest of the Apache API are not
there. The object is only made for a script whose source asks for it (C<< ->request >>).

=head1 METHODS

=head2 begin, end, current

    Perennial::Executor::Request->begin($env, $hit, $out, $log);
    my $r = Perennial::Executor::Request->current;
    Perennial::Executor::Request->end;

=head2 The request

C<args> (the query string, or its decoded pairs in list context), C<connection>
(C<client_ip>, C<remote_ip>, C<remote_host>), C<filename>, C<header_in>, C<headers_in> (a
case-insensitive table: C<< ->{Name} >>, C<get>), C<hostname>, C<is_initial_req>, C<method>,
C<notes>, C<path_info>, C<pnotes>, C<protocol>, C<read>, C<the_request>, C<unparsed_uri>,
C<uri>.

    my %args = $r->args;

=head2 The response

C<content_type>, C<err_headers_out>, C<header_out>, C<headers_out> (tables: C<set>, C<add>,
C<unset>, C<get>), C<no_cache>, C<print>, C<printf>, C<rflush>, C<send_http_header>
(mod_perl 1), C<status>. The head is read as a printed CGI head would be: a C<Location>
without a status is a 302 for a URL and an internal redirect for a local path, and a value
with a CR or LF makes the response a 500.

    $r->status(404);

=head2 Logging

C<log_error> and C<warn> write to the error log with the script's path.

    $r->log_error('no such user');

=cut
