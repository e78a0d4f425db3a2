use v5.36;

# The same application for every server. Content-Length is explicit because uWSGI's psgi
# plugin does not compute it for an array body (its HTTP/1.1 socket would never end the response).
sub ($env) { [200, ['Content-Type' => 'text/plain', 'Content-Length' => 6], ["Hello\n"]] };
