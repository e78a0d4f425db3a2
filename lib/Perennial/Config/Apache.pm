package Perennial::Config::Apache;
use v5.36;

# Reads an httpd.conf-style file into plain data: a list of directives and sections, each
# carrying the file and line it came from, so that Perennial::Config can name them in errors.
# It knows the syntax only; which directives exist is Perennial::Config's business.

sub parse_file ($class, $path) {
    open(my $fh, '<', $path) or return ([], ["$path: Can't open config file: $!"]);
    local $/;
    my $text = <$fh>;
    close $fh;
    return $class->parse_string($text, $path);
}

sub parse_string ($class, $text, $file = '-') {
    my @errors;
    my $top   = {items => []};
    my @stack = ($top);
    my @lines = split /\r?\n/, $text, -1;
    my $n     = 0;
    while (@lines) {
        my $line  = shift @lines;
        my $start = ++$n;

        # A trailing backslash continues the directive on the next line
        while ($line =~ s/\\\z// && @lines) { $line .= ' ' . shift @lines; $n++ }
        $line                        =~ s/\A\s+//;
        $line                        =~ s/\s+\z//;
        next if $line eq '' || $line =~ /\A#/;

        my $where = "$file line $start";
        if ($line =~ m{\A</(\w+)\s*>\z}) {
            my $name = $1;
            if (@stack == 1 || lc $stack[-1]{section} ne lc $name) {
                my $open = @stack > 1 ? "<$stack[-1]{section}> is open" : 'no section is open';
                push @errors, "$where: </$name> without matching <$name> ($open)";
                next;
            }
            pop @stack;
            next;
        }
        if ($line =~ m{\A<(\w+)(?:\s+(.*?))?\s*>\z}) {
            my ($name, $rest) = ($1, $2 // '');
            my ($args, $err)  = _words($rest);
            if ($err) { push @errors, "$where: $err"; next }
            my $section
                = {section => $name, args => $args, file => $file, line => $start, items => []};
            push @{$stack[-1]{items}}, $section;
            push @stack,               $section;
            next;
        }
        if ($line =~ /\A</) {
            push @errors, "$where: malformed section line '$line'";
            next;
        }
        my ($name, $rest) = $line =~ /\A(\S+)\s*(.*)\z/;
        my ($args, $err)  = _words($rest);
        if ($err) { push @errors, "$where: $err"; next }
        push @{$stack[-1]{items}}, {name => $name, args => $args, file => $file, line => $start};
    }
    for my $open (reverse @stack[1 .. $#stack]) {
        push @errors, "$open->{file} line $open->{line}: <$open->{section}> is never closed";
    }
    return ($top->{items}, \@errors);
}

# Splits arguments on white space as Apache's ap_getword_conf: "double" or 'single' quotes keep
# spaces; a backslash escapes only a backslash (anywhere) or, within quotes, that quote, and
# stays as written before anything else, so that a regex's \d or \. reaches the regex
sub _words ($text) {
    my @words;
    while (length $text) {
        $text =~ s/\A\s+//;
        last unless length $text;
        if ($text =~ s/\A(["'])((?:\\.|(?!\1)[^\\])*)\1(?=\s|\z)//s) {
            my ($quote, $word) = ($1, $2);
            push @words, $word =~ s/\\([\\$quote])/$1/gr;
        }
        elsif ($text =~ /\A["']/) { return (undef, "unbalanced quote in '$text'") }
        else                      { $text =~ s/\A(\S+)//; push @words, $1 =~ s/\\\\/\\/gr }
    }
    return (\@words, undef);
}

1;

__END__

=head1 NAME

Perennial::Config::Apache - read an httpd.conf-style file into plain data

=head1 SYNOPSIS

    my ($items, $errors) = Perennial::Config::Apache->parse_file('perennial.conf');
    die join("\n", @$errors) . "\n" if @$errors;

=head1 DESCRIPTION

Splits a configuration file in Apache's syntax into directives (C<Name arg arg>) and sections
(C<< <Location /path> ... </Location> >>). Comments start with C<#>, a trailing backslash
continues a line, and arguments may be quoted. Every item remembers its file and line.

=head1 METHODS

=head2 parse_file

    my ($items, $errors) = Perennial::Config::Apache->parse_file($path);

Returns the items and a list of syntax errors, each starting with C<FILE line N:>.

=head2 parse_string

    my ($items, $errors) = Perennial::Config::Apache->parse_string($text, 'name');

The same, for text already in memory.

=cut
