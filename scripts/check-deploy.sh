#!/usr/bin/env bash
# The deployment's Prometheus files and a real scrape, checked with promtool (Debian package
# `prometheus`):
#   - deploy/prometheus/prometheus.yml   promtool check config
#   - deploy/prometheus/alerts.yml       promtool check rules, then promtool test rules alerts.test.yml
#   - a /metrics scrape                  promtool check metrics (written by the test
#                                        metrics_scrape::metrics_of_a_server_that_did_the_work_are_complete_and_described)
#
#   scripts/check-deploy.sh [SCRAPE]     # default: target/tmp/metrics/scrape.prom
set -euo pipefail
cd "$(dirname "$0")/.."
scrape="${1:-${CARGO_TARGET_DIR:-target}/tmp/metrics/scrape.prom}"
command -v promtool >/dev/null || { echo "check-deploy: promtool missing (apt-get install prometheus)" >&2; exit 1; }
promtool check config deploy/prometheus/prometheus.yml
promtool check rules deploy/prometheus/alerts.yml
(cd deploy/prometheus && promtool test rules alerts.test.yml)
[ -s "$scrape" ] || { echo "check-deploy: no scrape at $scrape (run the metrics_scrape test first)" >&2; exit 1; }
echo "promtool check metrics < $scrape"
promtool check metrics < "$scrape"
echo "check-deploy: ok"
