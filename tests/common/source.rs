//! A second real PostgreSQL cluster standing in for the DBA's production server: started with
//! `initdb` and `pg_ctl` directly (not through pglab's sandbox code, so it is nobody's
//! sandbox), trusting local connections on its own socket directory, autovacuum off so its
//! statistics move only when something touches it. Stopped and removed when dropped.
#![allow(dead_code)]

use super::per_file::PerFile;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

static SHARED: PerFile<SourceCluster> = PerFile::new();

extern "C" fn stop_shared() {
    for c in SHARED.all() {
        c.stop();
    }
}

/// The source cluster the tests of the calling file share (started on first use, stopped at
/// exit). Each test uses schemas of its own on it.
#[track_caller]
pub fn shared() -> &'static SourceCluster {
    SHARED.get(std::panic::Location::caller().file(), stop_shared, || {
        SourceCluster::start(&super::temp_dir("source"))
    })
}

pub struct SourceCluster {
    pub dir: PathBuf,
    pub port: u16,
    bin: PathBuf,
    run_as: Option<(u32, u32)>,
}

impl SourceCluster {
    /// initdb and start a cluster in a fresh directory under `base`.
    pub fn start(base: &std::path::Path) -> SourceCluster {
        SourceCluster::start_with(base, "")
    }

    /// As [`SourceCluster::start`], with `extra` lines in its `postgresql.conf`
    /// (`shared_preload_libraries = 'pg_stat_statements'`).
    pub fn start_with(base: &std::path::Path, extra: &str) -> SourceCluster {
        let bin = pglab::server::pgbin::find(None)
            .expect("PostgreSQL server binaries")
            .dir;
        let run_as = nix::unistd::Uid::effective().is_root().then(|| {
            let u = nix::unistd::User::from_name("postgres")
                .unwrap()
                .expect("a postgres account");
            (u.uid.as_raw(), u.gid.as_raw())
        });
        let dir = base.join("source");
        std::fs::create_dir_all(&dir).unwrap();
        if let Some((uid, gid)) = run_as {
            nix::unistd::chown(&dir, Some(uid.into()), Some(gid.into())).unwrap();
        }
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let c = SourceCluster {
            dir,
            port,
            bin,
            run_as,
        };
        let data = c.dir.join("data");
        c.run(c.tool("initdb").arg("-D").arg(&data).args([
            "-A",
            "trust",
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
        ]));
        let conf = format!(
            "\nlisten_addresses = ''\nunix_socket_directories = '{}'\nport = {port}\nautovacuum = off\nfsync = off\n{extra}\n",
            c.dir.display()
        );
        use std::io::Write;
        std::fs::OpenOptions::new()
            .append(true)
            .open(data.join("postgresql.conf"))
            .unwrap()
            .write_all(conf.as_bytes())
            .unwrap();
        c.run(
            c.tool("pg_ctl")
                .arg("-D")
                .arg(&data)
                .arg("-l")
                .arg(c.dir.join("log"))
                .args(["-w", "start"]),
        );
        c
    }

    /// A command running one of the server's programs (pgbench, psql) as the cluster's account.
    pub fn tool(&self, name: &str) -> Command {
        let mut cmd = Command::new(self.bin.join(name));
        cmd.current_dir(&self.dir).env("LC_ALL", "C");
        if let Some((uid, gid)) = self.run_as {
            cmd.uid(uid).gid(gid);
        }
        cmd
    }

    fn run(&self, cmd: &mut Command) {
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{:?}: {}",
            cmd,
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A key=value conninfo for `user` on database `postgres`.
    pub fn conninfo(&self, user: &str) -> String {
        format!(
            "host={} port={} user={user} dbname=postgres",
            self.dir.display(),
            self.port
        )
    }

    /// A session as `postgres` (the superuser), for setting the source up and watching it.
    pub async fn admin(&self) -> tokio_postgres::Client {
        let (c, conn) = tokio_postgres::connect(&self.conninfo("postgres"), tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        c
    }
}

impl SourceCluster {
    /// A streaming hot standby of this cluster (`pg_basebackup -R` as the server's OS user),
    /// on a port and socket directory of its own, started and ready for read-only sessions.
    pub fn standby(&self, base: &std::path::Path) -> SourceCluster {
        let dir = base.join("standby");
        std::fs::create_dir_all(&dir).unwrap();
        if let Some((uid, gid)) = self.run_as {
            nix::unistd::chown(&dir, Some(uid.into()), Some(gid.into())).unwrap();
        }
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let c = SourceCluster {
            dir,
            port,
            bin: self.bin.clone(),
            run_as: self.run_as,
        };
        let data = c.dir.join("data");
        c.run(
            c.tool("pg_basebackup")
                .arg("-h")
                .arg(&self.dir)
                .arg("-p")
                .arg(self.port.to_string())
                .args(["-U", "postgres", "-R", "-X", "stream", "--no-sync", "-D"])
                .arg(&data),
        );
        let conf = format!(
            "\nunix_socket_directories = '{}'\nport = {port}\nhot_standby = on\n",
            c.dir.display()
        );
        use std::io::Write;
        std::fs::OpenOptions::new()
            .append(true)
            .open(data.join("postgresql.conf"))
            .unwrap()
            .write_all(conf.as_bytes())
            .unwrap();
        c.run(
            c.tool("pg_ctl")
                .arg("-D")
                .arg(&data)
                .arg("-l")
                .arg(c.dir.join("log"))
                .args(["-w", "start"]),
        );
        c
    }

    /// Stop the server and remove its directory.
    pub fn stop(&self) {
        let _ = self
            .tool("pg_ctl")
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-m", "immediate", "-w", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Drop for SourceCluster {
    fn drop(&mut self) {
        self.stop();
    }
}
