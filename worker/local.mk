# worker/local.mk: tlm-worker, one training job per process.
bin_PROGRAMS += worker/tlm-worker
worker_tlm_worker_CPPFLAGS = $(AM_CPPFLAGS) $(JANSSON_CFLAGS)
worker_tlm_worker_SOURCES = \
	worker/main.c \
	worker/describe.c worker/describe.h \
	worker/run.c worker/run.h \
	worker/evalrun.c worker/evalrun.h \
	worker/events.c worker/events.h \
	worker/heartbeat.c worker/heartbeat.h \
	worker/signals.c worker/signals.h \
	worker/buildinfo.c worker/buildinfo.h
nodist_worker_tlm_worker_SOURCES = worker/git-commit.h
worker_tlm_worker_LDADD = $(ENGINE_LIBS)

# The git commit of the sources, baked in at build time for the `start`
# event: from git when the source tree is a git checkout (with "-dirty" when
# tracked files differ from HEAD), else from worker/git-commit, which
# `make dist` writes into the tarball, else "unknown".  The header is only
# rewritten when the commit changes, so builds stay incremental.
CLEANFILES += worker/git-commit.h
worker/tlm_worker-buildinfo.$(OBJEXT): worker/git-commit.h
worker/git-commit.h: wrk-git-commit-check
	@$(MKDIR_P) worker; \
	c=unknown; \
	if test -e '$(top_srcdir)/.git' && c2=`git -C '$(top_srcdir)' rev-parse HEAD 2>/dev/null`; then \
	  c=$$c2; git -C '$(top_srcdir)' diff --quiet HEAD -- 2>/dev/null || c=$$c-dirty; \
	elif test -f '$(top_srcdir)/worker/git-commit'; then \
	  c=`sed -n '1{s/[^0-9a-zA-Z-]//g;p;}' '$(top_srcdir)/worker/git-commit'`; \
	fi; \
	test -n "$$c" || c=unknown; \
	echo "#define WRK_GIT_COMMIT \"$$c\"" >$@.tmp; \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi
wrk-git-commit-check:
.PHONY: wrk-git-commit-check

dist-hook: wrk-dist-git-commit
wrk-dist-git-commit:
	@if test -e '$(top_srcdir)/.git' && c=`git -C '$(top_srcdir)' rev-parse HEAD 2>/dev/null`; then \
	  git -C '$(top_srcdir)' diff --quiet HEAD -- 2>/dev/null || c=$$c-dirty; \
	  echo $$c >'$(distdir)/worker/git-commit'; \
	elif test -f '$(top_srcdir)/worker/git-commit'; then \
	  cp '$(top_srcdir)/worker/git-commit' '$(distdir)/worker/git-commit'; \
	fi
.PHONY: wrk-dist-git-commit
