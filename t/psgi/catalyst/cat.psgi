use v5.36;
use File::Basename qw(dirname);
use lib dirname(__FILE__) . '/lib';
use Cat;

# A small Catalyst application, as its own scaffold writes the .psgi
Cat->apply_default_middlewares(Cat->psgi_app);
