package Cat;
use Moose;
use namespace::autoclean;
use Catalyst::Runtime 5.80;
use Catalyst;

extends 'Catalyst';

# A Catalyst application with no plugins and no config file: t/psgi/catalyst.t mounts it
# under a <Location>, where it must route by the path below the mount
__PACKAGE__->config(name => 'Cat', disable_component_resolution_regex_fallback => 1);
__PACKAGE__->setup;

1;
