//! libpq's connection conventions against a real server (the test lab's sandbox over TCP,
//! which wants its role's password): a `service` from `pg_service.conf` (`PGSERVICEFILE`)
//! with the password from a `passfile` (`PGPASSFILE`), and `target_session_attrs` choosing
//! among the hosts by what each server is.

use crate::common;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;

use pglab::server::{Target, conninfo};

/// The sandbox's password file, copied to a file of this test's (0600, as libpq wants it).
fn passfile(tag: &str) -> std::path::PathBuf {
    let lab = common::lab();
    let f = lab.dir.join(format!("{tag}.pgpass"));
    std::fs::copy(&lab.sandbox.passfile, &f).unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    f
}

async fn current_user(t: &Target) -> Result<String, String> {
    let c = t.connect().await.map_err(|e| e.to_string())?;
    Ok(c.query_one("SELECT current_user::text", &[])
        .await
        .unwrap()
        .get(0))
}

#[tokio::test]
async fn a_service_and_a_passfile_reach_the_server() {
    let lab = common::lab();
    let svc = lab.dir.join("pg_service.conf");
    std::fs::write(
        &svc,
        format!(
            "[lab]\nhost=127.0.0.1\nport={}\nuser=pglab\ndbname=pglab\nsslmode=disable\n",
            lab.port
        ),
    )
    .unwrap();
    let (svc, pass) = (
        svc.to_string_lossy().into_owned(),
        passfile("svc").to_string_lossy().into_owned(),
    );
    let env: BTreeMap<&str, &str> = BTreeMap::from([
        ("PGSERVICEFILE", svc.as_str()),
        ("PGPASSFILE", pass.as_str()),
    ]);
    let p = conninfo::resolve(Some("service=lab"), &env).unwrap();
    assert!(p.password.is_none(), "the password comes from the passfile");
    let t = Target::new(p, false).unwrap();
    assert_eq!(current_user(&t).await.unwrap(), "pglab");
    // Without the passfile the same service is refused by the server: the file did it.
    let empty = lab.dir.join("empty.pgpass");
    std::fs::write(&empty, "").unwrap();
    std::fs::set_permissions(&empty, std::fs::Permissions::from_mode(0o600)).unwrap();
    let empty = empty.to_string_lossy().into_owned();
    let env: BTreeMap<&str, &str> = BTreeMap::from([
        ("PGSERVICEFILE", svc.as_str()),
        ("PGPASSFILE", empty.as_str()),
    ]);
    let t = Target::new(conninfo::resolve(Some("service=lab"), &env).unwrap(), false).unwrap();
    assert!(current_user(&t).await.is_err());
}

#[tokio::test]
async fn target_session_attrs_keeps_only_a_server_that_is_what_it_asks_for() {
    let lab = common::lab();
    let pass = passfile("attrs").to_string_lossy().into_owned();
    let target = |attrs: &str| {
        // Two hosts: a socket directory nobody listens in, then the sandbox over TCP.
        let s = format!(
            "host=/nonexistent-pglab,127.0.0.1 port={} user=pglab dbname=pglab sslmode=disable passfile={pass} target_session_attrs={attrs}",
            lab.port
        );
        Target::new(
            conninfo::resolve(Some(&s), &BTreeMap::new()).unwrap(),
            false,
        )
        .unwrap()
    };
    for ok in ["any", "read-write", "primary", "prefer-standby"] {
        assert_eq!(
            current_user(&target(ok)).await.as_deref(),
            Ok("pglab"),
            "{ok}"
        );
    }
    for no in ["standby", "read-only"] {
        let e = current_user(&target(no)).await.unwrap_err();
        assert!(
            e.contains(&format!(
                "127.0.0.1:{} is a read-write primary, not what target_session_attrs={no} asks for",
                lab.port
            )),
            "{no}: {e}"
        );
    }
}
