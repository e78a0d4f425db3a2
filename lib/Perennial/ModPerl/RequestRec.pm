package Perennial::ModPerl::RequestRec;
use v5.36;
use Perennial::ErrorPage ();
use Perennial::Executor::Environment;
use Perennial::ModPerl::HeadersIn;
use Perennial::ModPerl::Table;

# What Apache2::RequestRec holds: the request as it came (method, uri, args, headers_in ...),
# the response being made (status, content_type, headers_out ...) and the request's place in
# the server (location, handler, dir_config, server, connection). Accessors that mod_perl lets
# set take a new value and return the old one. Tables are made the first time they are asked
# for, so a script that never looks costs nothing.

my $MAX_HITS = 10_000;    # Paths whose CGI variables are kept, so made-up ones cannot grow them

sub ap_auth_type ($self, @new) { $self->_env(AUTH_TYPE => @new) }

# The query string (mod_perl 2, in any context); for an object asked for as mod_perl 1's
# Apache->request, its decoded pairs in list context, as mod_perl 1 gave them
sub args ($self, @new) {
    my $env   = $self->{env};               # As _env, without its call (most handlers ask for args)
    my $query = $env->{QUERY_STRING} // '';
    $env->{QUERY_STRING} = $new[0] if @new;
    $query = undef                            # None asked
        if $query eq ''
        && index($env->{'perennial.url'} // $env->{REQUEST_URI} // '', '?') < 0;
    return $query if !wantarray || @new || !$self->{mod_perl1};
    return map { tr/+/ /r =~ s/%([0-9A-Fa-f]{2})/chr hex $1/ger } map { split /=/, $_, 2 }
        split /[&;]/, $query // '';
}

# The body bytes sent to the client (mod_perl's, for a log handler and for CGI::Carp): what a
# streamed response has written so far, the whole body's once the response has gone (Phases'
# finish notes it), 0 before anything went
sub bytes_sent ($self) {
    return $self->{bytes_sent} if defined $self->{bytes_sent};
    my $writer = $self->{out_writer} // ($self->{out} && $self->{out}{writer});
    return $writer ? $writer->{bytes} // 0 : 0;
}

sub connection ($self) {
    return $self->{connection} //= Apache2::Connection->new($self->{env});
}

sub content_encoding ($self, @new) { $self->_head(content_encoding => @new) }

sub content_languages ($self, @new) {
    return $self->_head(content_languages => @new ? [@{$new[0]}] : ()) // [];
}

# As _head sets a field, in one call: nearly every handler and script sets its type
sub content_type ($self, @new) {
    my $old = $self->{content_type};
    @$self{qw(content_type head_set)} = ($new[0], 1) if @new;
    return $old;
}

# PerlSetVar and PerlAddVar: a value (the first) for a name, or the whole table
sub dir_config ($self, $key = undef, @new) {
    my $table = $self->{dir_config}
        //= Perennial::ModPerl::Table->from_vars(($self->{set} // $self->{site})->{dir_config});
    return $table unless defined $key;
    my $old = $table->get($key);
    $table->set($key, $new[0]) if @new;
    return $old;
}

sub document_root ($self) { $self->{site}{document_root} // $self->{env}{DOCUMENT_ROOT} }

sub err_headers_out ($self) {
    $self->{head_set} = 1;
    return $self->{err_headers_out} //= Perennial::ModPerl::Table->new;
}

# The name and port the client used, as Apache's with UseCanonicalName Off, and as a script's
# SERVER_NAME and SERVER_PORT (Perennial::ErrorPage::server_of): Host's name in lower case and
# its port, else the server's ServerName and its port, else the scheme's
sub get_server_name ($self) { (Perennial::ErrorPage::server_of($self->{env}))[0] }
sub get_server_port ($self) { (Perennial::ErrorPage::server_of($self->{env}))[1] }

sub filename ($self, @new) {
    $self->_map if $self->{unmapped};
    return $self->_field(filename => @new);
}

sub handler     ($self, @new)  { $self->_field(handler => @new) }
sub header_in   ($self, $name) { $self->headers_in->get($name) }                    # mod_perl 1
sub header_only ($self)        { $self->{env}{REQUEST_METHOD} eq 'HEAD' ? 1 : 0 }

sub header_out ($self, $name, @value) {    # mod_perl 1
    my $old = $self->headers_out->get($name);
    $self->{headers_out}->set($name, $value[0]) if @value;
    return $old;
}

# The request's header fields (Perennial::ModPerl::HeadersIn): a table whose entries are made
# from the PSGI environment when first needed, a get before that looking at its one key
sub headers_in ($self) {
    return $self->{headers_in}
        //= Perennial::ModPerl::Table->lazy('Perennial::ModPerl::HeadersIn', $self->{env});
}

sub headers_out ($self) {
    $self->{head_set} = 1;
    return $self->{headers_out} //= Perennial::ModPerl::Table->new;
}

# Host's name, as Apache's r->hostname (lower case, no port); none without Host
sub hostname ($self) {
    return defined $self->{env}{HTTP_HOST} ? $self->get_server_name : undef;
}

sub is_initial_req ($self) { $self->{prev} || $self->main ? 0 : 1 }
sub location       ($self) { $self->{site}{location} // '/' }
sub log            ($self) { Apache2::Log::Request->new($self->_who, $self->_log) }

sub log_error ($self, @message) {
    my $log = $self->_log or return;
    $log->error($self->_who . join '', @message);
    return;
}

sub log_reason ($self, $reason, $file = $self->{filename}) {    # mod_perl 1
    return $self->log_error("access to ", $file // $self->uri, " failed: $reason");
}
sub main   ($self)       {undef}                                   # Perennial makes no subrequests
sub method ($self, @new) { $self->_env(REQUEST_METHOD => @new) }

sub method_number ($self, @new) {    # Apache2::Const's M_* for the method, else M_INVALID
    my $old = $self->{method_number} // do {
        my $method = $self->method =~ tr/-/_/r;
        (Apache2::Const->can("M_$method") // \&Apache2::Const::M_INVALID)->();
    };
    $self->{method_number} = $new[0] if @new;    # As Apache2::AuthCookie sets it with method
    return $old;
}
sub next ($self) { $self->{next} }

sub notes ($self, @new) {
    $self->{notes} = $new[0] if @new;
    return $self->{notes} //= Perennial::ModPerl::Table->new;
}

sub path_info ($self, @new) {
    $self->_map if $self->{unmapped};
    return $self->_field(path_info => @new);
}

# The request's own Perl data: pnotes, pnotes(key), pnotes(key => value)
sub pnotes ($self, @args) {
    my $notes = $self->{pnotes} //= {};
    return $notes unless @args;
    return $notes->{$args[0]} if @args == 1;
    return $notes->{$args[0]} = $args[1];
}

# The request's pool: cleanup_register on it runs code when the request ends
sub pool ($self) {
    return $self->{pool} //= do {
        $self->{phases}->arm_close($self) if $self->{phases};
        APR::Pool->new;
    };
}

# PerlCleanupHandler and PerlLogHandler code pushed by the request runs, with it, when it ends
sub push_handlers ($self, $phase, @codes) {
    die "push_handlers: Perennial runs only PerlCleanupHandler and PerlLogHandler from a "
        . "request, not $phase\n"
        unless $phase =~ /\APerl(?:Cleanup|Log)Handler\z/;
    push @{$self->{cleanup}}, map { ref $_ eq 'ARRAY' ? @$_ : $_ } @codes;
    $self->{phases}->arm_close($self) if $self->{phases};
    return 1;
}
sub prev         ($self)       { $self->{prev} }
sub protocol     ($self)       { $self->{env}{SERVER_PROTOCOL} }
sub proxyreq     ($self, @new) { $self->_field(proxyreq => @new) // 0 }
sub useragent_ip ($self)       { $self->{env}{REMOTE_ADDR} }           # Apache 2.4's: the request's

# No identd lookup, as Apache's IdentityCheck Off
sub get_remote_logname ($self) {undef}
sub request_time       ($self) { $self->{time} }
sub server             ($self) { $self->{server} //= Apache2::ServerRec->for_request($self->{env}) }

# (A page that stands for an error has that error's status, as Apache gives it)
sub status ($self, @new) { $self->_head(status => @new) // $self->{env}{'perennial.status'} // 200 }

# Kept, as Apache's r->status_line; it does not set the status: Apache sends it only when it
# matches the status (and Perennial sends the standard reason phrase), so one set alone leaves
# the status as it was, as under Apache
sub status_line ($self, @new) { $self->_field(status_line => @new) }

# What a handler module's CGI variables are made from: its file, PATH_INFO and SCRIPT_NAME, kept
# per path (with the variables, once made) in its executor's $self->{hits}, and made when first
# asked for (under perl-script as the handlers begin, under modperl when subprocess_env first
# asks). With no DocumentRoot nothing maps the URL to a file: no SCRIPT_FILENAME, and the URL is
# SCRIPT_NAME.
sub cgi_hit ($self) {
    return $self->{hit} //= do {
        my ($file, $path_info, $uri) = ($self->filename // '', $self->path_info // '', $self->uri);
        my $hits = $self->{hits};
        %$hits = () if keys %$hits >= $MAX_HITS;
        $hits->{"$file\0$path_info\0$uri"} //= {
            file        => $file,
            path_info   => $path_info,
            script_name => substr($uri, 0, length($uri) - length $path_info),
        };
    };
}

# The variables a CGI script would get, as a table that can be changed; in void context with no
# arguments, also put into %ENV (mod_perl's way of setting up the environment late). Before a
# response sets them up (in a phase before it), only what SetEnvIf, BrowserMatch and handlers
# set, as Apache's r->subprocess_env then: what a handler sets there is carried back to the
# request by Perennial::ModPerl::Phases, for Require env and the script.
sub subprocess_env ($self, @args) {
    my $cgi = $self->{environment} // $self->{site}{environment};
    $self->cgi_hit if $self->{hits};    # A handler module's, made when first asked for
    my $table = $self->{subprocess_env} //= Perennial::ModPerl::Table->new(
          $cgi
        ? $cgi->cgi($self->{env}, $self->{hit})
        : map {@$_} values %{$self->{env}{'perennial.setenvif'} // {}}
    );
    if (!@args) {
        return $table if defined wantarray;
        my (@names, @values);
        $table->do(sub ($name, $value) { push @names, $name; push @values, $value; 1 });
        Perennial::Executor::Environment->add(\@names, \@values);    # Gone after the request
        return;
    }
    my $old = $table->get($args[0]);
    $table->set(@args) if @args > 1;
    return $old;
}

sub the_request ($self) {
    return $self->{env}{'perennial.the_request'}    # After an internal redirect: the client's
        // join ' ', @{$self->{env}}{qw(REQUEST_METHOD REQUEST_URI SERVER_PROTOCOL)};
}
sub unparsed_uri ($self) { $self->{env}{REQUEST_URI} }

# The path of the URL, decoded, without the query
sub uri ($self, @new) {
    $self->{uri} //= ($self->{env}{SCRIPT_NAME} // '') . ($self->{env}{PATH_INFO} // '');
    return $self->_field(uri => @new);
}

sub user ($self, @new) { $self->_env(REMOTE_USER => @new) }

sub warn ($self, @message) {
    my $log = $self->_log or return;
    $log->warn($self->_who . join '', @message);
    return;
}

# Where a URL that no file was looked for leads, as Apache's directory walk says: the existing
# directories, then one more part of the path (a file, or what does not exist), and the rest
# is path_info. Only when asked.
sub _map ($self) {
    my ($path, $rest) = @{delete $self->{unmapped}};
    my @parts = grep {length} split m{/}, $rest;
    $path =~ s{/+\z}{};
    $path .= '/' . shift @parts while @parts && -d $path;
    $self->{filename} //= $path;
    $self->{path_info} //= @parts ? join '/', '', @parts : '';
    return;
}

# The virtual host's error log, or the location's, or the worker's
sub _log ($self) {
    return $self->{env}{'perennial.log'} // $self->{site}{log}
        // Perennial::ModPerl::Server->error_log;
}

# A bit mask of Apache2::Const's M_* methods that the handler says the resource allows (kept;
# Perennial's Allow headers are its own)
sub allowed ($self, @new) { $self->_field(allowed => @new) // 0 }

# Perennial sends every response with its head: an HTTP/0.9 answer cannot be asked for
sub assbackwards ($self, @new) {
    die "Perennial sends every response with its head: assbackwards(1) is not supported\n"
        if @new && $new[0];
    return 0;
}

# Whether PerlOptions +Name is set for the request's sections, for the directory options
# mod_perl answers this for (each is off unless set, as mod_perl's flags are)
my %DIR_OPTION = (
    parseheaders  => 'parse_headers',
    setupenv      => 'setup_env',
    mergehandlers => 'merge_handlers',
    globalrequest => 'global_request'
);

sub is_perl_option_enabled ($self, $name) {
    my $key = $DIR_OPTION{lc $name} or die "PerlOptions $name is not a directory option\n";
    return $self->{set} && $self->{set}{$key} ? 1 : 0;
}

# What a log line from the request begins with: the client and the file, as Apache's
sub _who ($self) {
    my $file = $self->filename;    # Mapped now if it was not
    return "[client $self->{env}{REMOTE_ADDR}] " . ($file ? "$file: " : '');
}

# A value of the PSGI environment, which setting changes for the rest of the request
sub _env ($self, $key, @new) {
    my $old = $self->{env}{$key};
    $self->{env}{$key} = $new[0] if @new;
    return $old;
}

# A part of the response head: setting it means the request object makes the head
sub _head ($self, $key, @new) {
    $self->{head_set} = 1 if @new;
    return $self->_field($key, @new);
}

sub _field ($self, $key, @new) {
    my $old = $self->{$key};
    $self->{$key} = $new[0] if @new;
    return $old;
}

1;

__END__

=head1 NAME

Perennial::ModPerl::RequestRec - the request and response fields of mod_perl's $r

=head1 SYNOPSIS

    my $r = shift;                          # in a Registry or PerlRun script
    my %args = $r->args;
    $r->content_type('text/plain');
    $r->headers_out->set('X-Served-By' => 'Perennial');
    my $value = $r->dir_config('Name');

=head1 DESCRIPTION

The methods of Apache2::RequestRec (and Apache2::RequestUtil's C<dir_config>, C<location>,
C<document_root>) for Perennial's request object: see L<Perennial::ModPerl> for the whole list
and where they differ from mod_perl.

=cut
