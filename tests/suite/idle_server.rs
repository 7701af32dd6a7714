//! An idle server reads idle in pglab's own view of it: the snapshot is one read-only
//! transaction whose commit is taken back out of the rate, and the session reading it is not
//! counted among the connections. (Its own sandbox: no other test may touch this server.)

use crate::common;

use std::time::Duration;

use pglab::server::snapshot;

#[tokio::test]
async fn an_idle_server_shows_no_commits_and_no_sessions_from_pglab_itself() {
    let target = common::lab().target();
    let client = target.connect().await.unwrap();
    let mut snaps = Vec::new();
    for _ in 0..4 {
        snaps.push(snapshot::read(&client, &target).await.unwrap());
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
    let last = snaps.last().unwrap();
    assert_eq!(
        last.connections_total(),
        0,
        "the poller's own session is not counted: {:?}",
        last.connections
    );
    let rates: Vec<f64> = snaps
        .windows(2)
        .filter_map(|w| w[1].rates_since(&w[0]))
        .map(|r| r.commits_per_s)
        .collect();
    // Before: about nine commits a second from the snapshot's own queries.
    assert!(
        rates.iter().all(|r| *r == 0.0),
        "commits/s on an idle server: {rates:?}"
    );
    // No transaction is left open by the snapshot (seen from another session).
    let other = target.connect().await.unwrap();
    let open: i64 = other
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE state LIKE 'idle in transaction%'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(open, 0, "a transaction was left open");
    drop(client);
}
