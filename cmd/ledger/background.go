package main

import (
	"context"
	"log/slog"

	"github.com/payledger/payledger/projections"
)

// component is a background part of `ledger serve`. start begins it and
// returns how to stop it; it gets a context that outlives the shutdown
// signal, because every component is stopped explicitly, in order.
type component struct {
	name  string
	start func(ctx context.Context) (stop func(context.Context) error, err error)
}

// components are serve's background parts in starting order; they stop in
// the reverse order, after the HTTP server.
func (m *Main) components() []component {
	cs := []component{{"debug listener", m.startDebug}}
	if m.cfg.Roles.Jobs {
		cs = append(cs, component{"jobs", m.startJobs})
	}
	if m.cfg.Roles.Projector {
		cs = append(cs, component{"projector", m.startProjector}, component{"sealer", m.startSealer})
	}
	return cs
}

func (m *Main) startDebug(context.Context) (func(context.Context) error, error) {
	_, stop, err := startDebug(m.cfg.DebugAddr, m.logger)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error { stop(ctx); return nil }, nil
}

func (m *Main) startJobs(ctx context.Context) (func(context.Context) error, error) {
	if err := m.jobs.Start(ctx); err != nil {
		return nil, err
	}
	return m.jobs.Stop, nil
}

func (m *Main) startProjector(ctx context.Context) (func(context.Context) error, error) {
	runCtx, cancel := context.WithCancel(ctx)
	runner := projections.NewRunner(projections.RunnerConfig{Logger: m.logger, FollowUp: m.jobs.Enqueuer(), Metrics: m.projector,
		Streams: m.store},
		m.pool, m.store)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := runner.Run(runCtx); err != nil {
			m.logger.Error("projector stopped", "err", err)
		}
	}()
	return func(context.Context) error { cancel(); <-done; return nil }, nil
}

// startSealer runs the chain sealer (see chain.go) alongside the projector.
func (m *Main) startSealer(ctx context.Context) (func(context.Context) error, error) {
	runCtx, cancel := context.WithCancel(ctx)
	sealer := projections.NewSealer(projections.SealerConfig{Logger: m.logger}, m.pool, m.store)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := sealer.Run(runCtx); err != nil {
			m.logger.Error("sealer stopped", "err", err)
		}
	}()
	return func(context.Context) error { cancel(); <-done; return nil }, nil
}

// background is the started components.
type background struct {
	logger *slog.Logger
	names  []string
	stops  []func(context.Context) error
}

// startBackground starts every component; when one fails, those already
// started are stopped again.
func (m *Main) startBackground(ctx context.Context) (*background, error) {
	bg := &background{logger: m.logger}
	for _, c := range m.components() {
		stop, err := c.start(context.WithoutCancel(ctx))
		if err != nil {
			bg.stop(context.WithoutCancel(ctx))
			return nil, err
		}
		bg.names, bg.stops = append(bg.names, c.name), append(bg.stops, stop)
	}
	return bg, nil
}

// stop stops the components, last started first.
func (bg *background) stop(ctx context.Context) {
	for i := len(bg.stops) - 1; i >= 0; i-- {
		if err := bg.stops[i](ctx); err != nil {
			bg.logger.Warn(bg.names[i]+" did not stop cleanly", "err", err)
		}
	}
}
