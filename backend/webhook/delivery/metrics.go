package delivery

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	hdcmetrics "github.com/health-data-connect/hdc/backend/internal/metrics"
	"github.com/health-data-connect/hdc/backend/store"
)

// statsTimeout bounds the outbox query of a scrape.
const statsTimeout = 5 * time.Second

// metrics are the dispatcher's Prometheus metrics.
type metrics struct {
	attempts   *prometheus.CounterVec
	deliveries *prometheus.CounterVec
	retries    *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	leasesLost prometheus.Counter
	inFlight   prometheus.Gauge
	disabled   *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, st store.Outbox, now func() time.Time) (*metrics, error) {
	m := &metrics{
		attempts:   prometheus.NewCounterVec(hdcmetrics.Counter("webhook_attempts_total", "Webhook delivery attempts by protocol and result (delivered, http_3xx, http_4xx, http_410, http_429, http_5xx, timeout, connection_error, dns_error, tls_error, address_refused, invalid_endpoint, invalid_event, aws_error)."), []string{"protocol", "result"}),
		deliveries: prometheus.NewCounterVec(hdcmetrics.Counter("webhook_deliveries_total", "Finished webhook deliveries by protocol and outcome: delivered, failed (given up), disabled (the subscription answered 410)."), []string{"protocol", "outcome"}),
		retries:    prometheus.NewCounterVec(hdcmetrics.Counter("webhook_retries_total", "Failed webhook attempts that were scheduled for a retry, by protocol."), []string{"protocol"}),
		duration:   prometheus.NewHistogramVec(hdcmetrics.Histogram("webhook_attempt_duration_seconds", "Durations of webhook delivery attempts by protocol.", []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 15}), []string{"protocol"}),
		leasesLost: prometheus.NewCounter(hdcmetrics.Counter("webhook_leases_lost_total", "Attempts whose result came after their delivery's lease was lost (the delivery is attempted again: raise the lease if this grows).")),
		inFlight:   prometheus.NewGauge(hdcmetrics.Gauge("webhook_attempts_in_flight", "Webhook delivery attempts this process is making now.")),
		disabled: prometheus.NewCounterVec(hdcmetrics.Counter("webhook_subscriptions_disabled_total",
			"Webhook subscriptions the backend disabled, by reason: gone (the endpoint answered 410), failing (every attempt failed for HDC_WEBHOOK_DISABLE_AFTER)."), []string{"reason"}),
	}
	queue := &queueCollector{
		store: st,
		now:   now,
		depth: prometheus.NewDesc(hdcmetrics.Name("webhook_queue_depth"),
			"Webhook deliveries waiting for a first attempt or a retry, in the whole database.", nil, nil),
		age: prometheus.NewDesc(hdcmetrics.Name("webhook_oldest_pending_age_seconds"),
			"Age of the oldest undelivered event (pending delivery); 0 when none is pending.", nil, nil),
	}
	if err := hdcmetrics.Register(reg, m.attempts, m.deliveries, m.retries, m.duration, m.leasesLost, m.inFlight, m.disabled, queue); err != nil {
		return nil, err
	}
	// Both reasons are scraped from the start, at 0, so that an alert's
	// increase sees the first disabling.
	for _, reason := range []string{store.DisabledGone, store.DisabledFailing} {
		m.disabled.WithLabelValues(reason)
	}
	return m, nil
}

// observe counts an attempt of protocol with result r that led to next.
func (m *metrics) observe(protocol string, r Result, d time.Duration, next store.Next) {
	m.attempts.WithLabelValues(protocol, resultClass(r.Outcome)).Inc()
	m.duration.WithLabelValues(protocol).Observe(d.Seconds())
	switch {
	case next.Status == store.DeliveryPending:
		m.retries.WithLabelValues(protocol).Inc()
	case next.DisableSubscription:
		m.deliveries.WithLabelValues(protocol, "disabled").Inc()
	default:
		m.deliveries.WithLabelValues(protocol, string(next.Status)).Inc()
	}
}

// resultClass bounds the result label: HTTP statuses by class except 410
// and 429, every AWS error code as aws_error.
func resultClass(outcome string) string {
	switch {
	case strings.HasPrefix(outcome, "aws_"):
		return "aws_error"
	case strings.HasPrefix(outcome, "http_"):
		code, err := strconv.Atoi(strings.TrimPrefix(outcome, "http_"))
		switch {
		case err != nil || code < 100 || code > 599:
			return "http_other"
		case code == 410 || code == 429:
			return outcome
		}
		return "http_" + strconv.Itoa(code/100) + "xx"
	}
	return outcome
}

// queueCollector reads the outbox's depth and age at each scrape. Every
// replica reports the same, database-wide, values.
type queueCollector struct {
	store      store.Outbox
	now        func() time.Time
	depth, age *prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.depth
	ch <- c.age
}

// Collect implements prometheus.Collector.
func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), statsTimeout)
	defer cancel()
	st, err := c.store.OutboxStats(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.depth, err)
		return
	}
	var age float64
	if !st.OldestPending.IsZero() {
		age = max(c.now().Sub(st.OldestPending).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(st.Pending))
	ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, age)
}
