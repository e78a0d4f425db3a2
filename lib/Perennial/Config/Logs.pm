package Perennial::Config::Logs;
use v5.36;
use Exporter qw(import);
use Perennial::Log::Format;

# mod_log_config's directives: LogFormat (with or without a nickname), CustomLog (a file, a
# pipe to a command, with a nickname or a format) and TransferLog (the last LogFormat without
# a nickname, else Apache's common format). Read into plain data; the formats are checked
# once everything is read, since a nickname may be defined after its use.

our @EXPORT_OK = qw(log_directive resolve_logs);

# undef when the directive is not one of these, '' when read, else the reason it is wrong
sub log_directive ($values, $item) {
    my $name = lc $item->{name};
    my @args = @{$item->{args}};
    if ($name eq 'logformat') {
        return 'LogFormat takes a format and an optional nickname' if !@args || @args > 2;
        if   (@args == 2) { $values->{log_formats}{$args[1]} = $args[0] }
        else              { $values->{log_formats}{''}       = $args[0] }
        return '';
    }
    if ($name eq 'customlog' || $name eq 'transferlog') {
        my $custom = $name eq 'customlog';
        return "$item->{name} takes a file or |command"
            . ($custom ? ', a format or nickname and an optional env=' : '')
            if !@args || @args > ($custom ? 3 : 1);
        push @{$values->{notes}},
            "$item->{file} line $item->{line}: CustomLog $args[2] ignored: every request is logged"
            if @args == 3;
        push @{$values->{custom_logs}},
            {
            target => $args[0],
            format => $custom ? $args[1] // 'perennial' : undef,
            where  => "$item->{file} line $item->{line}"
            };
        return '';
    }
    return;
}

# Each log's format string from its nickname (its own, or Apache's), checked; errors named
sub resolve_logs ($values, $errors) {
    my %formats = (%Perennial::Log::Format::NICKNAMES, %{$values->{log_formats} // {}});
    for my $log (@{$values->{custom_logs} // []}) {
        my $format = $log->{format} // $formats{''} // $formats{common};
        $format = $formats{$format} if exists $formats{$format} && $format ne '';
        eval { Perennial::Log::Format->compile($format); 1 }
            or push @$errors, "$log->{where}: " . ($@ =~ s/\s+\z//r);
        $log->{format} = $format;
    }
}

1;

__END__

=head1 NAME

Perennial::Config::Logs - LogFormat, CustomLog and TransferLog, as mod_log_config reads them

=head1 SYNOPSIS

    my $err = log_directive(\%values, $item);    # undef: not one of these
    resolve_logs(\%values, \@errors);            # once the whole file is read

=head1 DESCRIPTION

C<LogFormat FORMAT NICKNAME> names a format, C<LogFormat FORMAT> sets the one C<TransferLog>
uses. C<CustomLog TARGET [FORMAT|NICKNAME]> adds an access log (several may be given; each
request goes to all); TARGET is a file or C<|command> (the command is started once by the
manager and reads the lines on its standard input, as Apache's piped logs, e.g.
C<|/usr/bin/rotatelogs /var/log/site/access.%Y%m%d 86400>). Without a format a CustomLog
uses C<perennial> (C<combined> with the duration in microseconds, which C<perennial bench>
and C<tune> read). See L<Perennial::Log::Format> for the directives and nicknames.

=head1 FUNCTIONS

=head2 log_directive

    my $err = log_directive(\%values, $item);

=head2 resolve_logs

    resolve_logs(\%values, \@errors);

=cut
