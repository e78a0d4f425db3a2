use v5.36;
use Life::Version;

# Answers with the version of a module the manager loads (PerlModule Life::Version)
sub ($env) { [200, ['Content-Type' => 'text/plain'], [Life::Version::version()]] };
