# make run: install what is missing, then serve the examples on http://127.0.0.1:8529/
# make test: install what is missing, then run every test
PERL  ?= perl
PROVE ?= prove

.PHONY: deps run test bench tidy critic

deps:
	@sh script/install-deps run test

run: deps
	@mkdir -p logs
	$(PERL) bin/perennial serve -c examples/perennial.conf

test: deps
	$(PROVE) -lr t

bench: deps
	@sh script/install-deps bench
	$(PERL) bench/hello.pl
	$(PERL) bench/cgi.pl
	$(PERL) bench/instructions.pl
	$(PERL) bench/static.pl
	$(PERL) bin/perennial bench examples/heavy.bench

tidy:
	@sh script/install-deps test
	perltidy --profile=.perltidyrc -b -bext='/' bin/perennial $$(find lib t bench -name '*.p[ml]' -o -name '*.t')

critic:
	@sh script/install-deps test
	perlcritic --profile .perlcriticrc lib bin
