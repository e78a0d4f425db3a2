# Answers with the status its query names (?status=100), as an array or, with &stream=1, through
# the streaming interface: for the refusal of a status that cannot end a response
sub {
    my ($env) = @_;
    my ($status) = $env->{QUERY_STRING} =~ /status=([^&]*)/;
    my $res = [$status, ['Content-Type' => 'text/plain'], ["status $status\n"]];
    return $res unless $env->{QUERY_STRING} =~ /stream=1/;
    return sub {
        my ($respond) = @_;
        my $w = $respond->([@$res[0, 1]]);
        $w->write("streamed\n");
        $w->close;
    };
};
