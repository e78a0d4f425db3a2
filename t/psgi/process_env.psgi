# What of the process environment systemd's variables reach an application: none should
my $app = sub {
    my @seen = grep {/\A(?:LISTEN_|NOTIFY_SOCKET)/} sort keys %ENV;
    return [200, ['Content-Type' => 'text/plain'], [@seen ? join("\n", @seen) . "\n" : "none\n"]];
};
