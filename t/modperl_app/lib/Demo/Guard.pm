package Demo::Guard;
use strict;
use warnings;
use Apache2::RequestRec  ();
use APR::Table           ();
use Apache2::RequestUtil ();
use Apache2::Access      ();
use Apache2::Log         ();
use Apache2::Const -compile => qw(OK DECLINED FORBIDDEN HTTP_UNAUTHORIZED);

# An access handler: in only with the right header
sub access {
    my $r = shift;
    return Apache2::Const::OK if ($r->headers_in->{'X-Let-In'} // '') eq 'yes';
    $r->log_error('Demo::Guard refused ', $r->uri);
    return Apache2::Const::FORBIDDEN;
}

# An authentication handler: Basic, one user
sub authen {
    my $r = shift;
    my ($rc, $password) = $r->get_basic_auth_pw;
    return $rc                if $rc != Apache2::Const::OK;
    return Apache2::Const::OK if $password eq 'secret' && $r->user =~ /\A(?:alice|bob)\z/;
    $r->note_basic_auth_failure;
    return Apache2::Const::HTTP_UNAUTHORIZED;
}

# An authorization handler: alice in the morning is fine, bob never
sub authz {
    my $r = shift;
    return Apache2::Const::OK if $r->user eq 'alice';
    return Apache2::Const::FORBIDDEN;
}

# A fixup handler leaves a note for the response
sub fixup {
    my $r = shift;
    $r->notes->set(fixup => 'seen by ' . $r->uri);
    return Apache2::Const::DECLINED;
}

# A header parser handler that answers by itself for one path
sub header_parser {
    my $r = shift;
    return Apache2::Const::FORBIDDEN if $r->uri =~ /forbidden-early/;
    return Apache2::Const::OK;
}

# A log handler: the status and the path, into a file the test reads
sub log {
    my $r    = shift;
    my $file = $r->dir_config('LogTo') or return Apache2::Const::DECLINED;
    open my $fh, '>>', $file or die "Can't open $file: $!";
    print $fh join(' ', 'log', $r->status, $r->bytes_sent, $r->uri, $r->notes->get('fixup') // '-'),
        "\n";
    close $fh;
    return Apache2::Const::OK;
}

sub cleanup {
    my $r    = shift;
    my $file = $r->dir_config('LogTo') or return Apache2::Const::DECLINED;
    open my $fh, '>>', $file or die "Can't open $file: $!";
    print $fh "cleanup ", $r->uri, "\n";
    close $fh;
    return Apache2::Const::OK;
}

1;
