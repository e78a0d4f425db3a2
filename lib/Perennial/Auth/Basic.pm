package Perennial::Auth::Basic;
use v5.36;
use Crypt::PasswdMD5 qw(apache_md5_crypt);
use Digest::SHA      qw(sha1_base64);
use MIME::Base64     qw(decode_base64);

# mod_auth_basic with mod_authn_file: the user and password of an `Authorization: Basic`
# header, checked against an htpasswd file in the formats Debian's htpasswd writes: $apr1$
# (its default; Crypt::PasswdMD5), bcrypt $2y$ (-B), {SHA} (-s), and crypt(3)'s own ($5$, $6$,
# $1$, DES). The file is read again when it changes.

my %FILES;    # path => [mtime, {user => hash}]

# (user, undef) when the credentials are right, (user or undef, reason) when not; a third value
# says the fault is the server's (an AuthUserFile it cannot read), not the client's
sub authenticate ($class, $env, $file) {
    my ($user, $password, $why) = $class->credentials($env);
    return (undef, $why) if $why;
    return ($user, 'AuthUserFile not specified in the configuration', 1) unless defined $file;
    my $users = _users($file)   // return ($user, "Can't read AuthUserFile $file: $!", 1);
    my $hash  = $users->{$user} // return ($user, "user $user not found");
    return ($user, undef) if _verify($password, $hash);
    return ($user, "user $user: password mismatch");
}

# The user and password of the request's Basic credentials, or (undef, undef, what is wrong)
sub credentials ($class, $env) {
    my $header = $env->{HTTP_AUTHORIZATION} // return (undef, undef, 'no credentials given');
    my ($b64)  = $header =~ /\A\s*Basic\s+(\S+)/i    # The first, when two headers were joined
        or return (undef, undef, 'not Basic credentials');

    # As Apache's decoder (apr_base64_decode): the token up to its first byte that is not base64,
    # where Perl's decode_base64 would skip such bytes and read on
    my ($user, $password) = split /:/, decode_base64($b64 =~ m{\A([A-Za-z0-9+/]*)} ? $1 : ''), 2;
    return (undef, undef, 'malformed credentials') unless defined $password && length $user;
    return ($user, $password);
}

# The WWW-Authenticate header that asks for Basic credentials for a realm
sub challenge ($class, $realm) {
    return ('WWW-Authenticate' => 'Basic realm="' . (($realm // '') =~ s/"/\\"/gr) . '"');
}

sub _users ($file) {
    my @st    = stat $file or return;
    my $known = $FILES{$file};
    return $known->[1] if $known && $known->[0] == $st[9];
    open(my $fh, '<', $file) or return;
    my %users;
    while (my $line = <$fh>) {
        chomp $line;
        next if $line =~ /\A\s*(?:#|\z)/;
        my ($user, $hash) = split /:/, $line, 2;
        $users{$user} //= $hash if defined $hash;    # A user's first line, as Apache reads it
    }
    close $fh;
    $FILES{$file} = [$st[9], \%users];
    return \%users;
}

sub _verify ($password, $hash) {
    my $made
        = $hash =~ /\A\$apr1\$/ ? apache_md5_crypt($password, $hash)
        : $hash =~ /\A\{SHA\}/  ? '{SHA}' . sha1_base64($password) . '='
        :                         crypt($password, $hash) // '';
    return _same($made, $hash);
}

# A comparison that takes as long whatever the first difference
sub _same ($a, $b) {
    return 0 if length $a != length $b;
    my $diff = 0;
    $diff |= ord(substr $a, $_, 1) ^ ord(substr $b, $_, 1) for 0 .. length($a) - 1;
    return $diff == 0;
}

1;

__END__

=head1 NAME

Perennial::Auth::Basic - HTTP Basic authentication against an htpasswd file

=head1 SYNOPSIS

    my ($user, $failed) = Perennial::Auth::Basic->authenticate($env, '/etc/apache2/.htpasswd');

=head1 DESCRIPTION

Reads C<Authorization: Basic ...> and checks it against C<AuthUserFile>, as mod_authn_file:
the hashes of Debian's C<htpasswd> (C<$apr1$> by default, bcrypt with C<-B>, C<{SHA}> with
C<-s>, crypt(3) with C<-d>) and the SHA-2 and MD5 crypt formats of the C library. The file is
cached and read again when its modification time changes.

=head1 METHODS

=head2 authenticate

    my ($user, $why_not, $servers_fault) = Perennial::Auth::Basic->authenticate($env, $file);

=cut
