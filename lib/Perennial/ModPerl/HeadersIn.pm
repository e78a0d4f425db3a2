package Perennial::ModPerl::HeadersIn;
use v5.36;

# A request's header fields as mod_perl's headers_in gives them, from its PSGI environment:
# each HTTP_ key is a field whose name is made from the key (HTTP_USER_AGENT is User-Agent),
# with Content-Type and Content-Length from their own keys. The source of a lazy APR::Table
# (Perennial::ModPerl::Table's lazy): its entries are made when first needed, and until then
# get asks value, which looks at the one key a name can come from.

my %FIELD_NAME;             # Each key's name, made once per process
my $FIELD_NAMES = 1_000;    # Names kept, so that made-up headers cannot grow them without end

# name => value for every field, the HTTP_ keys' in the order of their names
sub pairs ($class, $env) {
    %FIELD_NAME = () if keys %FIELD_NAME >= $FIELD_NAMES;
    return (
        (   map       { ($FIELD_NAME{$_} //= _name_of($_), $env->{$_}) }
            sort grep { index($_, 'HTTP_') == 0 } keys %$env
        ),
        ($env->{CONTENT_TYPE}   ? ('Content-Type',   $env->{CONTENT_TYPE})   : ()),
        ($env->{CONTENT_LENGTH} ? ('Content-Length', $env->{CONTENT_LENGTH}) : ())
    );
}

# The value of the field a name (in any case) is, as the table made from pairs would give it
# first, or undef: the one key the name maps to. A name made from a key has no underscore (a
# key's are its hyphens), so a name with one is none of them.
sub value ($class, $env, $name) {
    my $lc = lc $name;
    return $env->{CONTENT_TYPE}   || undef if $lc eq 'content-type';
    return $env->{CONTENT_LENGTH} || undef if $lc eq 'content-length';
    return undef if index($name, '_') >= 0;    ## no critic (ProhibitExplicitReturnUndef) none
    return $env->{'HTTP_' . uc($name =~ tr/-/_/r)};
}

# A field's name from its key: each part capitalised (the client's case is not in the key),
# an empty part kept (X-Test- is HTTP_X_TEST_, and stays X-Test-, as Apache has it)
sub _name_of ($key) {
    join '-', map {ucfirst} split /_/, lc(substr $key, 5), -1;
}

1;

__END__

=head1 NAME

Perennial::ModPerl::HeadersIn - a request's header fields, as headers_in gives them

=head1 SYNOPSIS

    my $table = Perennial::ModPerl::Table->lazy('Perennial::ModPerl::HeadersIn', $env);
    $table->get('User-Agent');    # $env->{HTTP_USER_AGENT}, without making the table

=cut
