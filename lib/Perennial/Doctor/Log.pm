package Perennial::Doctor::Log;
use v5.36;

# What a worker's error log says about a script (perennial doctor's log evidence, and what the
# runs of --run wrote): perl's "will not stay shared" at its compile, the /o regex and -T notes
# of the Registry executor, and the file handles it left open after its first request.

# The findings ({kind, line, name}) in an error log's text for the script at $path
sub findings ($text, $path) {
    my %seen;
    my @found;
    my $add = sub ($kind, $line, $name) {
        push @found, {kind => $kind, line => $line, name => $name}
            unless $seen{"$kind $line $name"}++;
    };
    for my $line (split /\n/, $text) {
        next if index($line, $path) < 0;
        if ($line =~ /Variable "([^"]+)" will not stay shared at \Q$path\E line (\d+)/) {
            $add->(closure => $2, $1);
        }
        elsif ($line =~ /\Q$path\E: uses the \/o regex flag/) { $add->('regex-o', 0, '/o') }
        elsif ($line =~ /\Q$path\E: -T is ignored/) { $add->(taint => 1, '-T') }
        elsif ($line =~ /\Q$path\E: file handle\(s\) (.+?) still open after the request/) {
            $add->('open-handle', 0, $_) for split ' ', $1;
        }
    }
    return @found;
}

# The text of an error log file
sub read_file ($file) {
    die "Can't read the error log \"$file\": it is a directory\n" if -d $file;
    open(my $fh, '<', $file) or die "Can't read the error log \"$file\": $!\n";
    local $/;
    my $text = <$fh> // die "Can't read the error log \"$file\": $!\n";
    return $text;
}

1;

__END__

=head1 NAME

Perennial::Doctor::Log - what a worker's error log says about a script

=head1 SYNOPSIS

    my @found = Perennial::Doctor::Log::findings(
        Perennial::Doctor::Log::read_file('logs/error.log'), '/srv/cgi-bin/guestbook.pl');

=head1 DESCRIPTION

Reads the lines a Registry executor writes about a script: perl's C<will not stay shared>
warnings (C<closure>, with the line), C<uses the /o regex flag> (C<regex-o>), C<-T is ignored>
(C<taint>) and C<file handle(s) ... still open after the request> (C<open-handle>, one per
handle). Other lines are left alone.

=cut
