package Perennial::Executor::Layers;
use v5.36;
use Carp   ();
use Encode ();

# The PerlIO layers a script pushes on its STDOUT or STDERR (binmode, `use open qw(:std ...)`),
# which are tied handles in a resident script: what the layers would have made of the text is
# made here, so the response and the error log get the bytes a real handle would carry. Text
# with wide characters and no layer to encode it goes out as UTF-8 with perl's warning, as
# perl does. Also the handle a script's BEGIN-time binmode reaches while it compiles, so the
# layers it asked for are kept with it.

# The warning names the script's line, not the tied handle's
our @CARP_NOT = qw(Perennial::Executor::Output Perennial::Executor::Errors);

# (said: where a stand-in handle's output goes while the script compiles; none, dropped)
sub new ($class, %from) {
    return bless {encoding => $from{encoding}, crlf => $from{crlf} // 0, said => $from{said}},
        $class;
}

sub copy ($self) { (ref $self)->new(%$self{qw(encoding crlf)}) }

# The bytes of text written to a handle with these layers, or none ($layers undef): one way for
# the tied STDOUT and STDERR alike
sub bytes_of ($layers, $text) {
    return $layers->bytes($text) if $layers;
    return utf8::is_utf8($text) ? plain($text) : $text;
}

# Whether any layer changes the bytes
sub any ($self) { $self->{encoding} || $self->{crlf} ? 1 : 0 }

# binmode HANDLE, LAYERS (no layers: :raw). False for an encoding Encode does not know.
sub push_layers ($self, $layers = ':raw') {
    for my $layer ($layers =~ /:([^:\s]+)/g) {
        if    ($layer eq 'raw')   { @$self{qw(encoding crlf)} = (undef, 0) }
        elsif ($layer eq 'bytes') { $self->{encoding}         = undef }
        elsif ($layer eq 'utf8')  { $self->{encoding}         = Encode::find_encoding('utf8') }
        elsif ($layer eq 'crlf')  { $self->{crlf}             = 1 }
        elsif ($layer eq 'pop') {
            $self->{encoding} ? ($self->{encoding} = undef) : ($self->{crlf} = 0);
        }
        elsif ($layer =~ /\Aencoding\(([^)]+)\)\z/) {
            my $enc = Encode::find_encoding($1) or return 0;
            $self->{encoding} = $enc;
        }
    }
    return 1;
}

# The layers of a real handle above its lowest (a script's STDOUT, a handle on its output), as
# these; undef when none changes the bytes. perl names an encoding's flag `utf8` after it.
sub of_handle ($class, $fh) {
    my $self = $class->new;
    my (undef, @names) = PerlIO::get_layers($fh);
    for my $name (@names) {
        $self->push_layers(":$name") unless $name eq 'utf8' && $self->{encoding};
    }
    return $self->any ? $self : undef;
}

# The layers as binmode takes them, for a real handle: CRLF below the encoding, as bytes() makes
# them; '' for none
sub perlio ($self) {
    my $enc = $self->{encoding};
    return ($self->{crlf} ? ':crlf' : '')
        . (!$enc ? '' : $enc->name eq 'utf8' ? ':utf8' : ':encoding(' . $enc->name . ')');
}

# The bytes a handle with these layers writes for the text
sub bytes ($self, $text) {
    $text =~ s/\n/\r\n/g if $self->{crlf};
    return $self->{encoding} ? $self->{encoding}->encode($text) : plain($text);
}

# The bytes of text on a handle without layers: characters above 255 as UTF-8, with the
# warning perl gives ("Wide character in print")
sub plain ($text) {
    return $text unless utf8::is_utf8($text);
    my $copy = $text;
    return $copy if utf8::downgrade($copy, 1);
    Carp::carp('Wide character in print');
    utf8::encode($text);
    return $text;
}

# Tied while a script compiles: binmode at BEGIN time is recorded; what is printed goes where
# the stand-in says (STDERR's to the error log), or nowhere
sub TIEHANDLE ($class, $self) {$self}
sub BINMODE   ($self, @layer) { $self->push_layers(@layer) }

sub PRINT ($self, @list) {
    $self->{said}->(bytes_of($self, join($, // '', @list) . ($\ // ''))) if $self->{said};
    return 1;
}
sub PRINTF ($self, $format, @list) { $self->PRINT(sprintf $format, @list) }

sub WRITE ($self, $buf, $len = undef, $offset = 0) {
    my $part = substr $buf, $offset, $len // length $buf;
    $self->PRINT($part);
    return length $part;
}
sub FILENO ($self) {undef}
sub CLOSE  ($self) {1}

1;

__END__

=head1 NAME

Perennial::Executor::Layers - what PerlIO layers make of a resident script's output

=head1 SYNOPSIS

    my $layers = Perennial::Executor::Layers->new;
    $layers->push_layers(':encoding(UTF-8)');    # from the tied handle's BINMODE
    my $bytes = $layers->bytes("caf\x{e9} \x{263a}\n");

=head1 DESCRIPTION

C<:utf8>, C<:encoding(NAME)> (any encoding Encode knows), C<:crlf>, C<:bytes>, C<:raw> and
C<:pop> as perl applies them; C<:unix>, C<:perlio> and C<:stdio> change no bytes. Without an
encoding layer, text with characters above 255 is written as UTF-8 with perl's "Wide character
in print" warning.

=cut
