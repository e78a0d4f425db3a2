use v5.36;
use File::Spec;

# A temporary whose DESTROY runs a failing eval (?destroy)
package Turns::Guard {
    sub new  ($class)       { bless {}, $class }
    sub said ($self, $said) {$said}

    sub DESTROY ($self) {
        eval { die "a cleanup that failed quietly\n" }
    }
}

# Says what it was asked ("METHOD PATH QUERY BODY-LENGTH"), in the form the query names:
# ?stream (the streaming interface), ?handle (a file handle body), ?die (it dies), ?cleanup
# (a cleanup handler), ?close, ?undef and ?destroy (below), the delayed responses ?later,
# ?later_handle, ?unclosed, ?silent, ?later_die, ?keep and ?stale (below), else an array body
sub ($env) {
    my $body = '';
    while ($env->{'psgi.input'}->read(my $buf, 65536)) { $body .= $buf }
    my $q    = $env->{QUERY_STRING};
    my $said = "$env->{REQUEST_METHOD} $env->{PATH_INFO} $q " . length($body) . "\n";
    die "asked to die\n" if $q eq 'die';

    # ?close: the application closes the connection's handle and opens a file, which may take
    # its number, before it answers (kept open past the answer)
    if ($q eq 'close') {
        close $env->{'psgix.io'};
        open($main::KEPT, '>', File::Spec->tmpdir . "/perennial-turns-$$")
            or die "Can't open a file: $!\n";
    }
    my @head = ('Content-Type' => 'text/plain');
    if ($q eq 'stream') {
        return sub ($respond) {
            my $w = $respond->([200, \@head]);
            $w->write($said);
            $w->close;
        };
    }
    my @whole = (200, [@head, 'Content-Length' => length $said]);
    my $later = _delayed($q, $said, \@head, \@whole);
    return $later if $later;
    if ($q eq 'handle') {
        open(my $fh, '<', \$said) or die "Can't open a string: $!\n";
        return [200, \@head, $fh];
    }
    push @{$env->{'psgix.cleanup.handlers'}}, sub ($e) { $e->{cleaned} = 1 }
        if $q eq 'cleanup';

    # ?undef: the application empties the connection's glob (its handle goes with it)
    undef *{$env->{'psgix.io'}} if $q eq 'undef';

    # ?destroy: a temporary whose DESTROY runs a failing eval as the application returns
    return [200, [@head, 'Content-Length' => length $said], [Turns::Guard->new->said($said)]]
        if $q eq 'destroy';
    return [200, [@head, 'Content-Length' => length $said], [$said]];
};

# A delayed response: ?later gives the whole response, ?later_handle one with a handle body,
# ?unclosed streams without closing its writer (the server closes it), ?alias writes through an
# alias of the writer and then undefines it, ?silent never responds,
# ?later_die dies; ?keep keeps its responder, which ?stale calls (its request has ended)
# before it responds with its own; ?emptied undefines its responder's sub after it responded
# (the loop must not give that sub to a later request)
sub _delayed ($q, $said, $head, $whole) {
    return sub ($respond) { $respond->([@$whole, [$said]]) }
        if $q eq 'later';
    return sub ($respond) {
        open(my $fh, '<', \$said) or die "Can't open a string: $!\n";
        $respond->([200, $head, $fh]);
        }
        if $q eq 'later_handle';
    return sub ($respond) { $respond->([200, $head])->write($said); return }
        if $q eq 'unclosed';
    return sub ($respond) {
        for my $w ($respond->([200, $head])) { $w->write($said); $w->close; $w = undef }
        return;
        }
        if $q eq 'alias';
    return sub ($respond) {return}
        if $q eq 'silent';
    return sub ($respond) { die "asked to die later\n" }
        if $q eq 'later_die';
    return sub ($respond) {
        $main::KEPT_RESPOND = $respond;
        $respond->([@$whole, [$said]]);
        }
        if $q eq 'keep';
    return sub ($respond) {
        $main::KEPT_RESPOND->([200, $head, ["stale\n"]]);
        $respond->([@$whole, [$said]]);
        }
        if $q eq 'stale';
    return sub ($respond) {
        $respond->([@$whole, [$said]]);
        undef &$respond;
        return;
        }
        if $q eq 'emptied';
    return;
}
