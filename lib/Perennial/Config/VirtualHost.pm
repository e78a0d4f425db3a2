package Perennial::Config::VirtualHost;
use v5.36;
use Exporter                    qw(import);
use Perennial::Config::Ignored  qw(ignored_merge);
use Perennial::Config::Sections qw(section);

# <VirtualHost addr:port ...>: its addresses, ServerName and ServerAlias, and what a virtual
# host may set of its own (DocumentRoot, Alias, ScriptAlias, its logs, its sections and the
# per-directory directives at its level); the rest belongs to the whole server and is refused
# with its line. The host's settings are read by the same code as the main server's ($apply).

our @EXPORT_OK = qw(server_name_parts virtual_host);

# ServerName's parts, as Apache reads [scheme://]name[:port]: (name, port or undef)
sub server_name_parts ($text) {
    my ($name, $port) = ($text // '') =~ m{\A(?:\w+://)?(\[[^\]]*\]|[^:/]*)(?::(\d+))?};
    return ($name, defined $port ? 0 + $port : undef);    # 0081 is 81, as Apache reads it
}

# Directives a virtual host may have besides sections and per-directory ones
my %OWN = map { $_ => 1 }
    qw(documentroot alias scriptalias aliasmatch scriptaliasmatch errorlog customlog transferlog
    logformat loglevel serveradmin httpprotocoloptions requestreadtimeout);

# Code loaded at start, which mod_perl allows in a <VirtualHost> too: a prefork server has one
# interpreter, into which a host without an interpreter pool of its own (PerlOptions +Parent,
# which needs threads) loads it, as the main server's. Read as the main server's, in order.
my %SERVER_CODE = map { $_ => 1 } qw(perlrequire perlpostconfigrequire perlmodule);

sub virtual_host ($values, $errors, $item, $apply) {
    my $where = "$item->{file} line $item->{line}";
    my @addrs = map {
        _address($_) // return push @$errors, "$where: <VirtualHost> address '$_' is "
            . 'not IP:port, *:port, [IPv6]:port, * or _default_ (names are not looked up)'
    } @{$item->{args}}
        or return push @$errors, "$where: <VirtualHost> takes one or more addresses";
    my %host = (addrs => \@addrs, file => $item->{file}, line => $item->{line}, aliases => []);
    my %own;
    for my $inner (@{$item->{items}}) {
        my $at = "$inner->{file} line $inner->{line}";
        if ($inner->{section}) {
            if (lc $inner->{section} eq 'virtualhost') {
                push @$errors, "$at: <VirtualHost> cannot be inside <VirtualHost>";
                next;
            }
            section(\%own, $errors, $inner);
            next;
        }
        my $name = lc $inner->{name};
        my @args = @{$inner->{args}};
        if ($name eq 'servername') {
            push @$errors, "$at: ServerName takes one name" if @args != 1;
            ($host{name}, $host{port}) = server_name_parts($args[0]);
            next;
        }
        if ($name eq 'serveralias') {
            push @$errors,          "$at: ServerAlias takes one or more names" unless @args;
            push @{$host{aliases}}, @args;
            next;
        }
        my $err
            = $SERVER_CODE{$name}
            ? $apply->($values, $inner, 1)
            : $apply->(\%own,   $inner, $OWN{$name});
        push @$errors, "$at: $err" if $err;
    }
    ignored_merge($values, \%own);
    $host{values} = \%own;
    push @{$values->{vhosts}}, \%host;
    return;
}

# [host, port]: IP:port, [IPv6]:port, *:port, *, _default_[:port], or an IP (any port)
sub _address ($word) {
    return ['*', '*'] if $word eq '*';
    return ['_default_', $1 // '*'] if $word =~ /\A_default_(?::(\d+|\*))?\z/;
    return [$1,    $2]  if $word =~ /\A\[([0-9a-fA-F:.]+)\]:(\d+|\*)\z/;
    return [$1,    $2]  if $word =~ /\A(\*|\d+\.\d+\.\d+\.\d+):(\d+|\*)\z/;
    return [$word, '*'] if $word =~ /\A\d+\.\d+\.\d+\.\d+\z/;
    return;
}

1;

__END__

=head1 NAME

Perennial::Config::VirtualHost - <VirtualHost> sections, read as Apache reads them

=head1 SYNOPSIS

    virtual_host(\%values, \@errors, $item, sub ($host_values, $item, $own) { ... });

=head1 DESCRIPTION

Reads a C<< <VirtualHost> >>: its addresses (C<IP:port>, C<[IPv6]:port>, C<*:port>, C<*>,
C<_default_>; host names are refused, as they would need DNS), C<ServerName>,
C<ServerAlias> (wildcards allowed), and what a virtual host may have of its own:
C<DocumentRoot>, C<Alias>, C<ScriptAlias>, C<ErrorLog>, C<CustomLog>, C<TransferLog>,
C<LogFormat>, sections, and per-directory directives at its level (C<SetEnv>, C<Options>,
C<DirectoryIndex>, ...). A directive of the whole server (C<MaxClients>, C<Listen>, ...)
inside it is refused with its line. L<Perennial::VirtualHosts> chooses the host per request.

=head1 FUNCTIONS

=head2 virtual_host

    virtual_host(\%values, \@errors, $item, $apply);

C<$apply-E<gt>(\%host_values, $item, $own)> reads a directive into the host's values; C<$own>
says whether it is one a virtual host may have even though it is not per-directory.

=cut
