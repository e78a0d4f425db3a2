# The front page of `make run`: what is mounted where
use v5.36;

my $html = <<'HTML';
<!doctype html>
<html><head><meta charset="utf-8"><title>Perennial examples</title></head>
<body>
<h1>Perennial is running</h1>
<p>The applications mounted by <code>examples/perennial.conf</code>:</p>
<ul>
<li><a href="/hello">/hello</a>: hello world, the benchmark's application</li>
<li><a href="/env">/env</a>: the PSGI environment and the worker's pid</li>
<li><a href="/stream">/stream</a>: a streamed (chunked) response</li>
<li>/echo: answers a POST with its body (<code>curl --data hi http://127.0.0.1:8529/echo</code>)</li>
</ul>
<p>The same CGI scripts (<code>examples/cgi-bin</code>) three ways: forked per request as mod_cgi
(<a href="/cgi-bin/hello.pl">/cgi-bin</a>), compiled per request
(<a href="/perlrun/hello.pl">/perlrun</a>), compiled once per worker
(<a href="/registry/hello.pl">/registry</a>). Try <code>count.pl</code>, <code>closure.pl</code>,
<code>counter.pl</code>, <code>cwd.pl</code> and <code>form.pl</code> under each.</p>
<p>Scoreboard: <code>bin/perennial status -c examples/perennial.conf</code></p>
</body></html>
HTML
sub ($env) {
    return [404, ['Content-Type' => 'text/plain'], ["Not Found\n"]] if $env->{PATH_INFO} ne '/';
    return [200, ['Content-Type' => 'text/html; charset=utf-8'], [$html]];
};
