package Perennial::Privileges;
use v5.36;
use POSIX ();

# Apache's User and Group: a manager started as root keeps root to bind ports and write its
# logs, pid file and scoreboard, and every worker gives it up before it runs anything of the
# site's (its child-init hooks, scripts, the CGI children it forks). Without User, root means
# Debian's www-data, as Debian's Apache; running scripts as root needs `User root`, said out
# loud in the log.

# What the workers will run as: {uid, gid, groups, user, group}, or undef when the manager is
# not root (nothing to give up). Dies with the reason when the user or group is unknown.
sub resolve ($class, %args) {
    return unless ($args{euid} // $>) == 0;
    my $user = $args{user} // $args{default} // return;
    my ($name, $uid, $gid) = _user($user);
    if (defined $args{group}) {
        (undef, $gid) = _group($args{group});
    }
    my $gname  = getgrgid($gid) // $gid;
    my @groups = defined $name ? _supplementary($name, $gid) : ();
    return {
        uid    => $uid,
        gid    => $gid,
        groups => [$gid, @groups],
        user   => $name // "#$uid",
        group  => $gname,
        root   => $uid == 0           ? 1 : 0,
        chosen => defined $args{user} ? 1 : 0,
    };
}

# Gives the privileges up for good, in this process (a worker, or the single process once it
# has bound its sockets); dies when the system refuses, rather than run on as root
sub drop ($class, $to) {
    return if !$to || $to->{root};
    POSIX::setgid($to->{gid}) or die "Can't set group $to->{group}: $!\n";
    local $! = 0;
    $) = join ' ', $to->{gid}, @{$to->{groups}};    ## no critic (RequireLocalizedPunctuationVars)
    die "Can't set supplementary groups: $!\n" if $!;
    POSIX::setuid($to->{uid}) or die "Can't set user $to->{user}: $!\n";
    die "Still root after setuid: refusing to go on\n" if $< == 0 || $> == 0;

    # The process stays undumpable, as the change of user left it: no other process of this
    # user (a CGI child, another site's script) may trace it and reach what root opened. Its
    # memory figures reach the status pages through the scoreboard instead.
    return 1;
}

# The first of the files that the user the workers run as cannot read (a directory above it
# closed to that user: a checkout in root's home), asked of a child that gives its privileges
# up; nothing when it can read them all, or nothing is given up
sub unreadable ($class, $to, @files) {
    return if !$to || $to->{root} || !@files;
    my $pid = fork // die "Can't fork: $!\n";
    if (!$pid) {
        my $at = eval { $class->drop($to); 1 } ? 0 : 255;
        for my $i (0 .. $#files) { $at ||= $i + 1 unless -r $files[$i] }
        POSIX::_exit($at);
    }
    waitpid $pid, 0;
    my $at = $? >> 8;
    return $at && $at <= @files ? $files[$at - 1] : undef;
}

# The start's line in the log about who will run the site's code
sub describe ($class, $to) {
    return unless $to;
    return "workers and scripts run as root (User root): every script can do anything"
        if $to->{root};
    my $how = $to->{chosen} ? '' : ' (no User given; Debian\'s Apache runs as www-data too)';
    return "workers and scripts run as user $to->{user}, group $to->{group}$how";
}

sub _user ($user) {
    if ($user =~ /\A#(\d+)\z/) {
        my @pw = getpwuid $1;
        return (@pw ? $pw[0] : undef, $1, @pw ? $pw[3] : $1);
    }
    my @pw = getpwnam $user or die "User $user: no such user on this system\n";
    return @pw[0, 2, 3];
}

sub _group ($group) {
    return (getgrgid($1) // "#$1", $1) if $group =~ /\A#(\d+)\z/;
    my @gr = getgrnam $group or die "Group $group: no such group on this system\n";
    return @gr[0, 2];
}

# The groups the user is a member of, as initgroups(3) would set them
sub _supplementary ($name, $gid) {
    my %seen = ($gid => 1);
    my @groups;
    setgrent();
    while (my @gr = getgrent()) {
        next unless grep { $_ eq $name } split ' ', $gr[3] // '';
        push @groups, $gr[2] unless $seen{$gr[2]}++;
    }
    endgrent();
    return @groups;
}

1;

__END__

=head1 NAME

Perennial::Privileges - User and Group: workers give up root before they run the site's code

=head1 SYNOPSIS

    my $to = Perennial::Privileges->resolve(user => $config->user, group => $config->group,
        default => 'www-data');
    $log->info(Perennial::Privileges->describe($to)) if $to;
    Perennial::Privileges->drop($to);    # in each worker, first thing

=head1 DESCRIPTION

When the manager runs as root it keeps root (to bind ports below 1024, write its logs, pid file
and scoreboard) and each worker sets its group, its supplementary groups (those of the user,
as initgroups(3)) and its user before its child-init hooks run, so the site's code, the
scripts and the CGI children they fork never run as root. C<User> and C<Group> take names or
C<#uid>/C<#gid>; without C<User>, C<default> is taken (the command gives C<www-data>, as
Debian's Apache; C<plackup -s Perennial> gives none, as Starman). C<User root>
keeps root for the workers, with a warning in the log. A manager that is not root changes
nothing.

=head1 METHODS

=head2 resolve

    my $to = Perennial::Privileges->resolve(user => 'www-data', group => 'www-data');

=head2 drop

    Perennial::Privileges->drop($to);

=head2 describe

    my $line = Perennial::Privileges->describe($to);

=cut
