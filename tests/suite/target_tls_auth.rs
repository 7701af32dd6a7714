//! TLS and passwords against a sandbox configured with a generated certificate authority and
//! a password-protected role: sslmode require / verify-ca / verify-full, wrong and missing
//! passwords, ~/.pgpass, and that the password never lands in a file pglab writes.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::sync::OnceLock;

use pglab::server::conninfo::{self, ConnParams};
use pglab::server::{Target, TargetError, snapshot};
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, Issuer, KeyPair,
};

const PASSWORD: &str = "s3cret-Pa55word";

struct Tls {
    ca_file: std::path::PathBuf,
    other_ca_file: std::path::PathBuf,
}

static TLS: OnceLock<Tls> = OnceLock::new();

fn write_owned(path: &std::path::Path, data: &str, mode: u32, lab: &common::TestLab) {
    std::fs::write(path, data).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    if let Some((uid, gid, _)) = &lab.sandbox.run_as {
        nix::unistd::chown(path, Some(*uid), Some(*gid)).unwrap();
    }
}

/// A CA named `name`: OpenSSL (libpq's TLS) takes a certificate whose subject equals its
/// issuer for self-signed, so the CA and the server certificate need names of their own.
fn ca(name: &str) -> (CertificateParams, KeyPair) {
    let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
    p.distinguished_name = DistinguishedName::new();
    p.distinguished_name.push(DnType::CommonName, name);
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    (p, KeyPair::generate().unwrap())
}

/// Configure the lab's sandbox once: TLS on with a CA-signed certificate for localhost, and a
/// role that must give a password over TCP.
fn setup() -> &'static Tls {
    TLS.get_or_init(|| {
        let lab = common::lab();
        let (ca_params, ca_key) = ca("pglab test CA");
        let ca_cert = ca_params.self_signed(&ca_key).unwrap();
        let issuer = Issuer::new(ca_params, ca_key);
        let server_key = KeyPair::generate().unwrap();
        let mut server_params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        server_params.distinguished_name = DistinguishedName::new();
        server_params.distinguished_name.push(DnType::CommonName, "localhost");
        let server_cert = server_params.signed_by(&server_key, &issuer).unwrap();
        let data = lab.sandbox.data();
        write_owned(&data.join("server.crt"), &server_cert.pem(), 0o644, lab);
        write_owned(&data.join("server.key"), &server_key.serialize_pem(), 0o600, lab);
        write_owned(&data.join("pglab.conf"), "ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\npassword_encryption = 'scram-sha-256'\n", 0o644, lab);
        let hba = std::fs::read_to_string(data.join("pg_hba.conf")).unwrap();
        write_owned(&data.join("pg_hba.conf"), &format!("host all alice 127.0.0.1/32 scram-sha-256\nhostssl all alice 127.0.0.1/32 scram-sha-256\n{hba}"), 0o600, lab);
        let ca_file = lab.dir.join("ca.pem");
        std::fs::write(&ca_file, ca_cert.pem()).unwrap();
        let (other, other_key) = ca("another CA");
        let other_ca_file = lab.dir.join("other-ca.pem");
        std::fs::write(&other_ca_file, other.self_signed(&other_key).unwrap().pem()).unwrap();
        lab.sandbox.stop().unwrap();
        let port = lab.sandbox.start().unwrap();
        assert_eq!(port, lab.port, "restart keeps the port in tests (fixed by first start)");
        // Its own thread and runtime: setup() may be first called from inside an async test.
        std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().unwrap();
            rt.block_on(async {
                let c = lab.target().connect().await.unwrap();
                c.batch_execute(&format!("CREATE ROLE alice LOGIN PASSWORD '{PASSWORD}'"))
                    .await
                    .unwrap();
            });
        })
        .join()
        .unwrap();
        Tls { ca_file, other_ca_file }
    })
}

fn params(extra: &str) -> ConnParams {
    let lab = common::lab();
    let env: std::collections::BTreeMap<&str, &str> = Default::default();
    conninfo::resolve(
        // Over TCP the sandbox wants its role's password, kept in its password file.
        Some(&format!(
            "host=localhost port={} user=pglab dbname=pglab passfile={} {extra}",
            lab.port,
            lab.sandbox.passfile.display()
        )),
        &env,
    )
    .unwrap()
}

#[tokio::test]
async fn tls_modes() {
    let tls = setup();
    let t = Target::new(params("sslmode=require"), false).unwrap();
    let c = t.connect().await.unwrap();
    let s = snapshot::read(&c, &t).await.unwrap();
    assert!(
        s.tls.as_deref().unwrap_or("").starts_with("TLS"),
        "{:?}",
        s.tls
    );

    let t = Target::new(
        params(&format!(
            "sslmode=verify-full sslrootcert={}",
            tls.ca_file.display()
        )),
        false,
    )
    .unwrap();
    t.connect()
        .await
        .expect("verify-full with the right CA and host name");

    let t = Target::new(
        params(&format!(
            "sslmode=verify-ca sslrootcert={}",
            tls.other_ca_file.display()
        )),
        false,
    )
    .unwrap();
    let e = t.connect().await.unwrap_err().to_string();
    assert!(
        e.contains("TLS handshake") && e.contains("sslrootcert"),
        "{e}"
    );

    let e = Target::new(
        params("sslmode=verify-full sslrootcert=/nonexistent.pem"),
        false,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("cannot read the root certificate"), "{e}");
}

#[tokio::test]
async fn passwords() {
    setup();
    let lab = common::lab();
    let base = format!(
        "host=127.0.0.1 port={} user=alice dbname=pglab sslmode=disable",
        lab.port
    );
    let env: std::collections::BTreeMap<&str, &str> = Default::default();
    let t = Target::new(
        conninfo::resolve(Some(&format!("{base} password=wrong")), &env).unwrap(),
        false,
    )
    .unwrap();
    let e = t.connect().await.unwrap_err().to_string();
    assert!(
        e.contains("password authentication failed for user \"alice\""),
        "{e}"
    );

    let nopw = Target::new(
        conninfo::resolve(Some(&format!("{base} passfile=/nonexistent")), &env).unwrap(),
        false,
    )
    .unwrap();
    assert!(matches!(
        nopw.connect_first(None).await,
        Err(TargetError::NeedPassword)
    ));
    let ask = |_: &str| Some(conninfo::Secret::new(PASSWORD));
    nopw.connect_first(Some(&ask))
        .await
        .expect("the prompt's answer is used");

    let pgpass = lab.dir.join("pgpass");
    std::fs::write(
        &pgpass,
        format!("127.0.0.1:{}:*:alice:{PASSWORD}\n", lab.port),
    )
    .unwrap();
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    let t = Target::new(
        conninfo::resolve(Some(&format!("{base} passfile={}", pgpass.display())), &env).unwrap(),
        false,
    )
    .unwrap();
    t.connect().await.expect("password from the pgpass file");
}

#[test]
fn password_never_written() {
    setup();
    let lab = common::lab();
    let out = lab
        .command()
        .env("PGPASSWORD", PASSWORD)
        .env("PGLAB_LOG", "debug")
        .args([
            "probe",
            "--format",
            "json",
            "--db",
            &format!(
                "postgresql://alice@127.0.0.1:{}/pglab?sslmode=require",
                lab.port
            ),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains(PASSWORD));
    let out = lab
        .command()
        .args([
            "probe",
            "--db",
            &format!("postgresql://alice:{PASSWORD}@127.0.0.1:{}/pglab", lab.port),
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stdout).contains(PASSWORD));
    for entry in walk(&lab.paths.data_dir) {
        let text = String::from_utf8_lossy(&std::fs::read(&entry).unwrap_or_default()).to_string();
        assert!(
            !text.contains(PASSWORD),
            "password found in {}",
            entry.display()
        );
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p))
            } else {
                out.push(p)
            }
        }
    }
    out
}

/// The loading clients (libpq, OpenSSL) reach a verify-full TLS target as pglab's own sessions
/// (rustls) do, with alice's password from PGPASSWORD, and load every row: single statements
/// and a pipeline whose replies (2000 statements' worth) span several TLS records.
#[test]
fn ingest_loads_over_tls_through_libpq() {
    let tls = setup();
    let lab = common::lab();
    // alice may write the lab schema of this database.
    std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let c = lab.target().connect().await.unwrap();
            c.batch_execute("GRANT CREATE ON DATABASE pglab TO alice")
                .await
                .unwrap();
        });
    })
    .join()
    .unwrap();
    let db = format!(
        "host=localhost port={} user=alice dbname=pglab sslmode=verify-full sslrootcert={}",
        lab.port,
        tls.ca_file.display()
    );
    for method in [
        &["--method", "insert"][..],
        &["--method", "insert-tx", "--pipeline", "on"],
    ] {
        let out = lab
            .command()
            .env("PGPASSWORD", PASSWORD)
            .args(["--db", &db, "run", "ingest", "--writes", "lab"])
            .args(method)
            .args([
                "--schema",
                "alice_lab",
                "--batch",
                "2000",
                "--rows",
                "4000",
                "--clients",
                "2",
                "--sync-commit",
                "off",
                "--repeat",
                "1",
                // Every row, however slow the machine: the default stops a trial after 2 s,
                // which 4,000 single-row inserts over TLS pass at a load of 10 on 2 cores.
                "--duration",
                "off",
                "--format",
                "json",
                "--no-history",
                "--yes",
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{method:?}: {err}");
        assert!(
            !err.contains(PASSWORD) && !String::from_utf8_lossy(&out.stdout).contains(PASSWORD)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let t = &v["trials"][0];
        assert_eq!(t["rows_counted"], 4000, "{method:?}");
    }
}
