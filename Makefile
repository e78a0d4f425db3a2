# make run: install what is missing, then serve the examples on http://127.0.0.1:8529/
# make test: install what is missing, then run every test
PERL  ?= perl
PROVE ?= prove
# Test files run at once: each starts its own servers on its own ports and directories, and most
# of a file's time is spent waiting on them, so two at a time take 400 s where one took 660 s
TEST_JOBS ?= 2
# What installs the missing Debian packages (debian/rules sets it to true: Build-Depends does)
INSTALL_DEPS ?= sh script/install-deps

# The C functions of the hot path, each built from xs/NAME.xs
XS_SO = lib/auto/Perennial/HTTP/Core/Core.so \
        lib/auto/Perennial/Executor/Blocks/Blocks.so \
        lib/auto/Perennial/Executor/CGIPragmas/CGIPragmas.so \
        lib/auto/Perennial/Executor/Environment/Environment.so \
        lib/auto/Perennial/Executor/Globals/Globals.so \
        lib/auto/Perennial/Executor/Handles/Handles.so \
        lib/auto/Perennial/Executor/Inc/Inc.so \
        lib/auto/Perennial/Executor/Libraries/Libraries.so \
        lib/auto/Perennial/Executor/Output/Output.so \
        lib/auto/Perennial/Executor/Resolver/Resolver.so \
        lib/auto/Perennial/Executor/Signals/Signals.so \
        lib/auto/Perennial/Executor/Spawn/Spawn.so \
        lib/auto/Perennial/Executor/Umask/Umask.so \
        lib/auto/Perennial/Log/Format/Format.so \
        lib/auto/Perennial/Scoreboard/Scoreboard.so

.PHONY: deps run test bench tidy critic xs deb

deps:
	@sh script/install-deps run test

# The C functions (Perennial::HTTP::Core, Perennial::Executor::Blocks, ::CGIPragmas,
# ::Environment, ::Globals, ::Handles, ::Inc, ::Libraries, ::Output, ::Resolver, ::Signals, ::Spawn and ::Umask,
# Perennial::Log::Format,
# Perennial::Scoreboard);
# without them Perennial runs their Perl twins
xs: $(XS_SO)

# The C files that an .xs includes (#include "FILE")
lib/auto/Perennial/Executor/Output/Output.so: xs/OutputLayer.c xs/OutputApi.h xs/PlainHash.h
lib/auto/Perennial/Executor/Handles/Handles.so: xs/OutputApi.h
lib/auto/Perennial/HTTP/Core/Core.so: xs/CoreResponse.c xs/CoreHead.c xs/CoreConnection.c \
	xs/Loop.c xs/LoopState.c xs/LoopResponse.c xs/LoopDelayed.c xs/LoopLog.c xs/LoopSize.c xs/LoopCleanup.c xs/FormatApi.h xs/Accept.c \
	xs/ScoreboardSlot.h xs/PlainHash.h
lib/auto/Perennial/Log/Format/Format.so: xs/FormatApi.h xs/FormatText.c
lib/auto/Perennial/Scoreboard/Scoreboard.so: xs/ScoreboardSlot.h

.SECONDEXPANSION:
$(XS_SO): %.so: xs/$$(notdir $$*).xs script/build-xs
	@$(INSTALL_DEPS) run
	@$(PERL) script/build-xs $< $@

run: deps xs
	@mkdir -p logs
	$(PERL) bin/perennial serve -c examples/perennial.conf

test: deps xs
	$(PROVE) -j$(TEST_JOBS) -lr t

# The figures each bench keeps for bench/goals.pl's table of issue 16's goals, at the end
GOALS = bench/results/goals.jsonl

bench: deps xs
	@sh script/install-deps bench
	@mkdir -p bench/results && rm -f $(GOALS)
	$(PERL) bench/hello.pl --workers 8 --connections 50 --duration 5 --record $(GOALS)
	$(PERL) bench/cgi.pl --workers 8 --record $(GOALS)
	$(PERL) bench/cgi.pl --what handler --workers 8 --record $(GOALS)
	$(PERL) bench/instructions.pl --record $(GOALS)
	$(PERL) bench/syscalls.pl --record $(GOALS)
	$(PERL) bench/memory.pl --preload CGI --record $(GOALS)
	$(PERL) bench/static.pl
	$(PERL) bench/idle.pl
	$(PERL) bench/slowloris.pl
	$(PERL) bench/tls.pl
	$(PERL) bench/multihost.pl
	$(PERL) bin/perennial bench examples/heavy.bench
	$(PERL) bench/goals.pl $(GOALS)

tidy:
	@sh script/install-deps test
	perltidy --profile=.perltidyrc -b -bext='/' bin/perennial $$(find lib t bench -name '*.p[ml]' -o -name '*.t')

critic:
	@sh script/install-deps test
	perlcritic --profile .perlcriticrc lib bin

# The Debian package, built with dpkg-buildpackage from debian/, put in dist/
deb:
	@sh script/install-deps run test
	dpkg-buildpackage -b -us -uc
	@mkdir -p dist
	mv ../perennial_$$($(PERL) -Ilib -MPerennial -e 'print $$Perennial::VERSION')_* dist/
	@ls dist/*.deb
