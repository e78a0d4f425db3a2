#!/usr/bin/perl
# The request as $r tells it (my $r = shift, as ModPerl::Registry passes it)
use strict;
use Apache2::RequestRec  ();
use Apache2::RequestUtil ();
use Apache2::RequestIO   ();
use Apache2::ServerRec   ();
use Apache2::Connection  ();
use Apache2::URI         ();
my $r = shift;
$r->content_type('text/plain');
my @lines = (
    'class=' . ref($r),
    'same=' . (Apache2::RequestUtil->request->the_request eq $r->the_request ? 1 : 0),
    'method=' . $r->method,
    'method_number=' . $r->method_number,
    'uri=' . $r->uri,
    'unparsed_uri=' . $r->unparsed_uri,
    'args=' . ($r->args // ''),
    'path_info=' . $r->path_info,
    'protocol=' . $r->protocol,
    'header_only=' . $r->header_only,
    'hostname=' . $r->hostname,
    'server_name=' . $r->get_server_name,
    'server_port=' . $r->get_server_port,
    'url=' . $r->construct_url('/x'),
    'the_request=' . $r->the_request,
    'is_initial_req=' . $r->is_initial_req,
    'main=' . (defined $r->main ? 'yes' : 'no'),
    'prev=' . (defined $r->prev ? 'yes' : 'no'),
    'handler=' . $r->handler,
    'location=' . $r->location,
    'dir_config=' . $r->dir_config('Greeting'),
    'dir_config_list=' . join(',', $r->dir_config->get('Multi')),
    'filename=' .  ($r->filename =~ m{([^/]+)\z})[0],
    'header_in=' . ($r->headers_in->{'x-test'} // ''),
    'proxyreq=' . $r->proxyreq,
    'status=' . $r->status,
    'user=' .         ($r->user // 'undef'),
    'request_time=' . (abs(time - $r->request_time) < 600 ? 'now' : $r->request_time),
    'server_hostname=' . $r->server->server_hostname,
    'is_virtual=' . $r->server->is_virtual,
    'server_admin=' . $r->server->server_admin,
    'server_dir_config=' . $r->server->dir_config('ServerWide'),
    'server_dir_config_table=' . ref($r->server->dir_config),
    'dir_config_inherited=' . $r->dir_config('ServerWide'),
    'error_fname=' . ($r->server->error_fname =~ m{([^/]+)\z})[0],
    'client_ip=' . $r->connection->client_ip,
    'local_ip=' . $r->connection->local_ip,
);
print map {"$_\n"} @lines;
