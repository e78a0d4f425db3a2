package Cat::Controller::Root;
use Moose;
use namespace::autoclean;

BEGIN { extends 'Catalyst::Controller' }

__PACKAGE__->config(namespace => '');

sub index : Path : Args(0) {
    my ($self, $c) = @_;
    $c->res->content_type('text/plain');
    $c->res->body('index; base ' . $c->req->base . '; link ' . $c->uri_for('/hello', 'bob') . "\n");
}

sub hello : Local : Args(1) {
    my ($self, $c, $name) = @_;
    $c->res->content_type('text/plain');
    $c->res->body("hello $name; path " . $c->req->path . "\n");
}

# A form posted to the application
sub echo : Local : Args(0) {
    my ($self, $c) = @_;
    $c->res->content_type('text/plain');
    $c->res->body('echo '
            . join(',', map { "$_=" . $c->req->params->{$_} } sort keys %{$c->req->params})
            . "\n");
}

# A streamed answer: Catalyst writes it through the PSGI writer
sub stream : Local : Args(0) {
    my ($self, $c) = @_;
    $c->res->content_type('text/plain');
    $c->res->write("part $_; path " . $c->req->path . "\n") for 1 .. 3;
}

sub redirect : Local : Args(0) {
    my ($self, $c) = @_;
    $c->res->redirect($c->uri_for('/hello', 'there'));
}

# Catalyst's own log (to psgi.errors) with a wide character
sub logged : Local : Args(0) {
    my ($self, $c) = @_;
    $c->log->warn("caf\x{e9} \x{263a} logged");
    $c->res->content_type('text/plain');
    $c->res->body("logged\n");
}

sub default : Path {
    my ($self, $c) = @_;
    $c->res->status(404);
    $c->res->content_type('text/plain');
    $c->res->body('default page; path ' . $c->req->path . "\n");
}

__PACKAGE__->meta->make_immutable;

1;
