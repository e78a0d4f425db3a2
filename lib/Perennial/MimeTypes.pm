package Perennial::MimeTypes;
use v5.36;

# mod_mime's part: the type of a file from its extensions, through TypesConfig (Debian's
# /etc/mime.types by default) and AddType, or ForceType for a whole section; the encoding an
# AddEncoding gives (a .gz file sent as it is, gzip in Content-Encoding); and the handler an
# AddHandler gives an extension. As mod_mime, every extension of the name counts, not only the
# last: "index.html.en" is text/html, and the last extension that means something wins.

sub new ($class, %args) {
    my $self = bless {types => {}}, $class;
    my $file = $args{file};
    return $self unless defined $file;
    open(my $fh, '<', $file) or die "Can't open TypesConfig \"$file\": $!\n";
    while (my $line = <$fh>) {
        next if $line =~ /\A\s*(?:#|\z)/;
        my ($type, @ext) = split ' ', $line;
        $self->{types}{lc $_} = $type for @ext;
    }
    close $fh;
    return $self;
}

# The Content-Type for a file under these settings, or '' when none is known
sub type_of ($self, $file, $set) {
    return $set->{force_type} if length($set->{force_type} // '');
    my $added = $set->{add_type} // {};
    my $type  = '';
    for my $ext (_extensions($file)) {
        $type = $added->{$ext} // $self->{types}{$ext} // $type;
    }
    return $type;
}

# The Content-Encoding AddEncoding gives the file's extensions (each one that has one, in
# order, as mod_mime joins them), or ''
sub encoding_of ($class, $file, $set) {
    my $encodings = $set->{add_encoding} or return '';
    return join ', ', grep {defined} map { $encodings->{$_} } _extensions($file);
}

# The handler AddHandler gives one of the file's extensions, if any
sub handler_of ($class, $file, $set) {
    my $handlers = $set->{add_handler} or return;
    my $handler;
    for my $ext (_extensions($file)) { $handler = $handlers->{$ext} // $handler }
    return $handler;
}

sub _extensions ($file) {
    my ($name) = $file =~ m{([^/]*)\z};
    my (undef, @ext) = split /\./, lc $name;
    return @ext;
}

1;

__END__

=head1 NAME

Perennial::MimeTypes - a file's type and handler from its extensions, as mod_mime

=head1 SYNOPSIS

    my $types = Perennial::MimeTypes->new(file => '/etc/mime.types');
    my $type  = $types->type_of('/srv/www/index.html', $settings);    # text/html
    my $h     = Perennial::MimeTypes->handler_of('/srv/cgi/app.cgi', $settings);

=head1 DESCRIPTION

Reads a C<TypesConfig> file (C<type ext ext ...> per line). C<type_of> gives C<ForceType> if the
settings have one, else the type of the last extension that C<AddType> or the table knows;
every extension of the name counts, as in mod_mime. C<handler_of> does the same with
C<AddHandler>: note that, as in Apache, C<app.cgi.txt> has the C<.cgi> handler.
C<encoding_of> gives the C<Content-Encoding> of the extensions that C<AddEncoding> names,
joined as mod_mime joins them (C<AddEncoding x-gzip .gz>: C<app.js.gz> is C<x-gzip>).

=head1 METHODS

=head2 new

    my $types = Perennial::MimeTypes->new(file => $path);

=head2 type_of

    my $type = $types->type_of($file, $settings);

=head2 encoding_of

    my $encoding = Perennial::MimeTypes->encoding_of($file, $settings);

=head2 handler_of

    my $handler = Perennial::MimeTypes->handler_of($file, $settings);

=cut
