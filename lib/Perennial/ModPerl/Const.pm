package Perennial::ModPerl::Const;
use v5.36;
use Carp qw(croak);

# The constants mod_perl code names: Apache2::Const (mod_perl 2), APR::Const and mod_perl 1's
# Apache::Constants, with their export tags. `use Apache2::Const -compile => qw(OK)` only makes
# Apache2::Const::OK; `use Apache2::Const qw(:common HTTP_OK)` also imports them. The values
# are Apache 2.4's, as mod_perl 2.0.12 gives them.

my %APACHE = (
    ACCESS_CONF                          => 64,
    AUTH_REQUIRED                        => 401,
    CONN_CLOSE                           => 1,
    CONN_KEEPALIVE                       => 2,
    CONN_UNKNOWN                         => 0,
    DECLINED                             => -1,
    DONE                                 => -2,
    EXEC_ON_READ                         => 256,
    FORBIDDEN                            => 403,
    HTTP_ACCEPTED                        => 202,
    HTTP_ALREADY_REPORTED                => 208,
    HTTP_BAD_GATEWAY                     => 502,
    HTTP_BAD_REQUEST                     => 400,
    HTTP_CONFLICT                        => 409,
    HTTP_CONTINUE                        => 100,
    HTTP_CREATED                         => 201,
    HTTP_EXPECTATION_FAILED              => 417,
    HTTP_FAILED_DEPENDENCY               => 424,
    HTTP_FORBIDDEN                       => 403,
    HTTP_GATEWAY_TIME_OUT                => 504,
    HTTP_GONE                            => 410,
    HTTP_IM_USED                         => 226,
    HTTP_INSUFFICIENT_STORAGE            => 507,
    HTTP_INTERNAL_SERVER_ERROR           => 500,
    HTTP_LENGTH_REQUIRED                 => 411,
    HTTP_LOCKED                          => 423,
    HTTP_LOOP_DETECTED                   => 508,
    HTTP_METHOD_NOT_ALLOWED              => 405,
    HTTP_MOVED_PERMANENTLY               => 301,
    HTTP_MOVED_TEMPORARILY               => 302,
    HTTP_MULTIPLE_CHOICES                => 300,
    HTTP_MULTI_STATUS                    => 207,
    HTTP_NETWORK_AUTHENTICATION_REQUIRED => 511,
    HTTP_NON_AUTHORITATIVE               => 203,
    HTTP_NOT_ACCEPTABLE                  => 406,
    HTTP_NOT_EXTENDED                    => 510,
    HTTP_NOT_FOUND                       => 404,
    HTTP_NOT_IMPLEMENTED                 => 501,
    HTTP_NOT_MODIFIED                    => 304,
    HTTP_NO_CONTENT                      => 204,
    HTTP_OK                              => 200,
    HTTP_PARTIAL_CONTENT                 => 206,
    HTTP_PAYMENT_REQUIRED                => 402,
    HTTP_PERMANENT_REDIRECT              => 308,
    HTTP_PRECONDITION_FAILED             => 412,
    HTTP_PRECONDITION_REQUIRED           => 428,
    HTTP_PROCESSING                      => 102,
    HTTP_PROXY_AUTHENTICATION_REQUIRED   => 407,
    HTTP_RANGE_NOT_SATISFIABLE           => 416,
    HTTP_REQUEST_ENTITY_TOO_LARGE        => 413,
    HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE => 431,
    HTTP_REQUEST_TIME_OUT                => 408,
    HTTP_REQUEST_URI_TOO_LARGE           => 414,
    HTTP_RESET_CONTENT                   => 205,
    HTTP_SEE_OTHER                       => 303,
    HTTP_SERVICE_UNAVAILABLE             => 503,
    HTTP_SWITCHING_PROTOCOLS             => 101,
    HTTP_TEMPORARY_REDIRECT              => 307,
    HTTP_TOO_MANY_REQUESTS               => 429,
    HTTP_UNAUTHORIZED                    => 401,
    HTTP_UNPROCESSABLE_ENTITY            => 422,
    HTTP_UNSUPPORTED_MEDIA_TYPE          => 415,
    HTTP_UPGRADE_REQUIRED                => 426,
    HTTP_USE_PROXY                       => 305,
    HTTP_VARIANT_ALSO_VARIES             => 506,
    LOG_ALERT                            => 1,
    LOG_CRIT                             => 2,
    LOG_DEBUG                            => 7,
    LOG_EMERG                            => 0,
    LOG_ERR                              => 3,
    LOG_INFO                             => 6,
    LOG_LEVELMASK                        => 15,
    LOG_MODULE_INDEX                     => -1,
    LOG_NOTICE                           => 5,
    LOG_NO_MODULE                        => -1,
    LOG_STARTUP                          => 64,
    LOG_TOCLIENT                         => 32,
    LOG_TRACE1                           => 8,
    LOG_TRACE2                           => 9,
    LOG_TRACE3                           => 10,
    LOG_TRACE4                           => 11,
    LOG_TRACE5                           => 12,
    LOG_TRACE6                           => 13,
    LOG_TRACE7                           => 14,
    LOG_TRACE8                           => 15,
    LOG_WARNING                          => 4,
    METHODS                              => 64,
    M_BASELINE_CONTROL                   => 24,
    M_CHECKIN                            => 18,
    M_CHECKOUT                           => 16,
    M_CONNECT                            => 4,
    M_COPY                               => 11,
    M_DELETE                             => 3,
    M_GET                                => 0,
    M_INVALID                            => 26,
    M_LABEL                              => 20,
    M_LOCK                               => 13,
    M_MERGE                              => 25,
    M_MKACTIVITY                         => 23,
    M_MKCOL                              => 10,
    M_MKWORKSPACE                        => 22,
    M_MOVE                               => 12,
    M_OPTIONS                            => 5,
    M_PATCH                              => 7,
    M_POST                               => 2,
    M_PROPFIND                           => 8,
    M_PROPPATCH                          => 9,
    M_PUT                                => 1,
    M_REPORT                             => 21,
    M_TRACE                              => 6,
    M_UNCHECKOUT                         => 17,
    M_UNLOCK                             => 14,
    M_UPDATE                             => 19,
    M_VERSION_CONTROL                    => 15,
    NOT_FOUND                            => 404,
    OK                                   => 0,
    OPT_ALL                              => 47,
    OPT_EXECCGI                          => 8,
    OPT_INCLUDES                         => 2,
    OPT_INC_WITH_EXEC                    => 32,
    OPT_INDEXES                          => 1,
    OPT_MULTI                            => 128,
    OPT_NONE                             => 0,
    OPT_SYM_LINKS                        => 4,
    OPT_SYM_OWNER                        => 64,
    OPT_UNSET                            => 16,
    OR_ALL                               => 31,
    OR_AUTHCFG                           => 8,
    OR_FILEINFO                          => 4,
    OR_INDEXES                           => 16,
    OR_LIMIT                             => 1,
    OR_NONE                              => 0,
    OR_OPTIONS                           => 2,
    OR_UNSET                             => 32,
    PROXYREQ_NONE                        => 0,
    PROXYREQ_PROXY                       => 1,
    PROXYREQ_RESPONSE                    => 3,
    PROXYREQ_REVERSE                     => 2,
    REDIRECT                             => 302,
    REMOTE_DOUBLE_REV                    => 3,
    REMOTE_HOST                          => 0,
    REMOTE_NAME                          => 1,
    REMOTE_NOLOOKUP                      => 2,
    RSRC_CONF                            => 128,
    SATISFY_ALL                          => 0,
    SATISFY_ANY                          => 1,
    SATISFY_NOSPEC                       => 2,
    SERVER_ERROR                         => 500,

    # Apache 2.4's authn_status and authz_status (PerlAddAuthzProvider's answers)
    AUTH_DENIED          => 0,
    AUTH_GRANTED         => 1,
    AUTH_USER_FOUND      => 2,
    AUTH_USER_NOT_FOUND  => 3,
    AUTH_GENERAL_ERROR   => 4,
    AUTHZ_DENIED         => 0,
    AUTHZ_GRANTED        => 1,
    AUTHZ_NEUTRAL        => 2,
    AUTHZ_GENERAL_ERROR  => 3,
    AUTHZ_DENIED_NO_USER => 4,
);
my %APR = (
    SUCCESS              => 0,
    EOF                  => 70014,
    EAGAIN               => 11,
    EINTR                => 4,
    ECONNRESET           => 104,
    ECONNABORTED         => 103,
    ETIMEDOUT            => 110,
    EPIPE                => 32,
    ENOENT               => 2,
    EACCES               => 13,
    OVERLAP_TABLES_SET   => 0,
    OVERLAP_TABLES_MERGE => 1,

    # APR::URI's unparse
    URI_UNP_OMITSITEPART   => 1,
    URI_UNP_OMITUSER       => 2,
    URI_UNP_OMITPASSWORD   => 4,
    URI_UNP_OMITUSERINFO   => 6,
    URI_UNP_REVEALPASSWORD => 8,
    URI_UNP_OMITPATHINFO   => 16,
    URI_UNP_OMITQUERY      => 32,
);
my @COMMON = qw(AUTH_REQUIRED DECLINED DONE FORBIDDEN NOT_FOUND OK REDIRECT SERVER_ERROR);
my %PREFIX = (
    http           => 'HTTP_',
    methods        => 'M_',
    log            => 'LOG_',
    options        => 'OPT_',
    satisfy        => 'SATISFY_',
    proxy          => 'PROXYREQ_',
    conn_keepalive => 'CONN_',
    remotehost     => 'REMOTE_',
    override       => 'OR_',
    authn_status   => 'AUTH_',
    authz_status   => 'AUTHZ_',
);

# The names of a tag of Apache2::Const
sub apache_tag ($tag) {
    return @COMMON if $tag eq 'common';
    my $prefix = $PREFIX{$tag} or return;
    my @names  = grep { index($_, $prefix) == 0 && $_ ne 'AUTH_REQUIRED' } keys %APACHE;
    push @names, 'METHODS'                              if $tag eq 'methods';
    push @names, qw(ACCESS_CONF EXEC_ON_READ RSRC_CONF) if $tag eq 'override';
    my @sorted = sort @names;
    return @sorted;
}

sub apr_tag ($tag) {
    return qw(SUCCESS)                                 if $tag eq 'common';
    return qw(OVERLAP_TABLES_SET OVERLAP_TABLES_MERGE) if $tag eq 'table';
    return grep {/\AE/} sort keys %APR    if $tag eq 'error';
    return grep {/\AURI_/} sort keys %APR if $tag eq 'uri';
    return;
}

# Makes the constants asked for in $package (and imports them into $into unless -compile)
sub import_into ($package, $table, $tags, $into, @args) {
    my $compile = @args && $args[0] eq '-compile' ? shift @args : undef;
    my @names   = map {
        my $name = $_;
        if ($name =~ /\A:(\w+)\z/) {
            my @in = $tags->($1) or croak "unknown tag $name of $package";
            @in;
        }
        else {
            croak "$package does not define $name" unless exists $table->{$name};
            $name;
        }
    } @args;
    my %new = map { ($_ => $table->{$_}) } grep { !defined &{"${package}::$_"} } @names;
    _constants($package, \%new) if %new;
    return                      if $compile;
    no strict 'refs';    ## no critic (ProhibitNoStrict) constant subs named at run time
    *{"${into}::$_"} = \&{"${package}::$_"} for @names;
    return;
}

# mod_perl 1's constants are mod_perl 2's under another name: the same subs, so that code that
# imports a name from both gets one sub, not a second that redefines the first
my %SAME_AS = ('Apache::Constants' => 'Apache2::Const');

# Constant subs that perl inlines where they are called, as mod_perl's are (constant.pm's, made
# in $package): a closure over the value (`sub () {$value}`) was called on every use, 1.5k
# instructions each time a handler returned Apache2::Const::OK
sub _constants ($package, $values) {
    my $same = $SAME_AS{$package};
    if ($same) {    # The same subs as its twin's, where the twin has them
        no strict 'refs';    ## no critic (ProhibitNoStrict) constant subs named at run time
        for my $name (grep { defined &{"${same}::$_"} } keys %$values) {
            *{"${package}::$name"} = \&{"${same}::$name"};
            delete $values->{$name};
        }
        return unless %$values;
    }
    require constant;
    eval "package $package; constant->import(\$values); 1"    ## no critic (ProhibitStringyEval)
        or die $@;
    return;
}

# The three packages: each imports from its table with its tags, and has every constant made
# before anyone asks, so Apache2::Const::OK works without a `use`
my %PACKAGES = (
    'Apache2::Const'    => [\%APACHE, \&apache_tag],
    'APR::Const'        => [\%APR,    \&apr_tag],
    'Apache::Constants' =>
        [\%APACHE, sub ($tag) { apache_tag($tag eq 'response' ? 'http' : $tag) }],    # mod_perl 1
);
for my $package (sort keys %PACKAGES) {
    my ($table, $tags) = @{$PACKAGES{$package}};
    no strict 'refs';    ## no critic (ProhibitNoStrict) each package's import
    *{"${package}::import"}
        = sub ($class, @args) { import_into($package, $table, $tags, scalar caller, @args) };
    import_into($package, $table, $tags, $package, '-compile', keys %$table);
}

1;

__END__

=head1 NAME

Perennial::ModPerl::Const - Apache2::Const, APR::Const and Apache::Constants

=head1 SYNOPSIS

    use Apache2::Const -compile => qw(OK DECLINED :http);
    return Apache2::Const::HTTP_FORBIDDEN;

    use Apache2::Const qw(:common);    # OK, DECLINED, DONE, NOT_FOUND, FORBIDDEN ...
    use Apache::Constants qw(OK);      # mod_perl 1

=head1 DESCRIPTION

The constants of mod_perl 2.0.12 on Apache 2.4: the C<:common>, C<:http>, C<:methods>,
C<:log>, C<:options>, C<:satisfy>, C<:proxy>, C<:conn_keepalive>, C<:remotehost> and
C<:override> tags of Apache2::Const, C<SUCCESS>, the table flags and the usual errors of
APR::Const. A name or tag that does not exist dies at compile time, naming it.

=cut
