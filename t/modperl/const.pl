#!/usr/bin/perl
# Apache2::Const, as a handler module uses it
use strict;
use Apache2::RequestRec ();
use Apache2::Const -compile => qw(OK DECLINED DONE REDIRECT :http M_POST);
use Apache2::Const qw(:common);
my $r = shift;
$r->content_type('text/plain');
print join(' ',
    OK,                                       DECLINED,
    Apache2::Const::DONE,                     Apache2::Const::REDIRECT,
    NOT_FOUND,                                FORBIDDEN,
    AUTH_REQUIRED,                            SERVER_ERROR,
    Apache2::Const::HTTP_OK,                  Apache2::Const::HTTP_NO_CONTENT,
    Apache2::Const::HTTP_PRECONDITION_FAILED, Apache2::Const::M_POST),
    "\n";
