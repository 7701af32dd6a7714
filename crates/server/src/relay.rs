//! The distance between the sandbox and its standby (`--standby-rtt 2ms`): a TCP relay on
//! 127.0.0.1 between the standby's `primary_conninfo` and the primary that holds every chunk
//! of bytes for half the round trip in each direction before passing it on.
//!
//! It is an emulation of latency only: no bandwidth limit, no loss, no reordering, no jitter
//! beyond the operating system's own scheduling. Bytes keep their order; a chunk read at `t`
//! is written at `t + RTT/2` however many follow it, so the relay adds delay without
//! throttling the stream.
//!
//! Blocking threads, not tokio: tokio's timer rounds a sleep up to the next whole
//! millisecond, which at 1 ms each way could double the emulated distance; a thread's
//! `nanosleep` overshoots by tens of microseconds. A standby holds one or two connections
//! (the WAL stream; `pg_basebackup` is not relayed), so four threads per connection cost
//! nothing.
//!
//! The relay runs as its own process (`pglab __standby-relay`, spawned and tracked by
//! [`super::standby_relay`]) so that it lives exactly as long as the standby, not as long as
//! the pglab that started it.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What a relay process is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelaySpec {
    /// The port to listen on at 127.0.0.1 (0: any free one).
    pub listen_port: u16,
    /// The primary's port at 127.0.0.1.
    pub to_port: u16,
    /// How long each chunk is held, each way (half the round trip).
    pub one_way: Duration,
}

/// Bind 127.0.0.1, write the bound port to `ready_file` (how the spawning pglab learns it),
/// then relay every connection until killed. Never returns Ok.
pub(crate) fn serve(spec: &RelaySpec, ready_file: &Path) -> std::io::Result<()> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, spec.listen_port))?;
    let port = listener.local_addr()?.port();
    crate::paths::write_atomic(ready_file, port.to_string().as_bytes())?;
    let to = SocketAddr::from((Ipv4Addr::LOCALHOST, spec.to_port));
    for conn in listener.incoming() {
        let Ok(client) = conn else { continue };
        let one_way = spec.one_way;
        std::thread::spawn(move || {
            if let Err(e) = relay_one(client, to, one_way) {
                eprintln!("relay: a connection ended: {e}");
            }
        });
    }
    Ok(())
}

/// One connection: both directions delayed, each by `one_way`.
fn relay_one(client: TcpStream, to: SocketAddr, one_way: Duration) -> std::io::Result<()> {
    let server = TcpStream::connect(to)?;
    for s in [&client, &server] {
        s.set_nodelay(true)?;
    }
    let up = pipe(client.try_clone()?, server.try_clone()?, one_way);
    let down = pipe(server, client, one_way);
    up.join().ok();
    down.join().ok();
    Ok(())
}

/// Copy `from` into `to`, each chunk held until `one_way` after it was read: a reader thread
/// stamps the chunks, a writer thread sends each one when it is due.
fn pipe(mut from: TcpStream, to: TcpStream, one_way: Duration) -> std::thread::JoinHandle<()> {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    let writer_to = to.try_clone();
    let writer = std::thread::spawn(move || {
        let Ok(mut out) = writer_to else { return };
        for (due, bytes) in rx {
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            if out.write_all(&bytes).is_err() {
                break;
            }
        }
        out.shutdown(Shutdown::Write).ok();
    });
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx
                        .send((Instant::now() + one_way, buf[..n].to_vec()))
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
        drop(tx);
        writer.join().ok();
        // The other side learns the peer is gone once everything due has been written.
        to.shutdown(Shutdown::Write).ok();
        from.shutdown(Shutdown::Read).ok();
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An echo server behind the relay: a round trip takes at least the emulated RTT, bytes
    /// arrive whole and in order.
    #[test]
    fn holds_each_direction_for_half_the_round_trip() {
        let echo = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let echo_port = echo.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for c in echo.incoming() {
                let mut c = c.unwrap();
                std::thread::spawn(move || {
                    let mut b = [0u8; 4096];
                    while let Ok(n) = c.read(&mut b) {
                        if n == 0 || c.write_all(&b[..n]).is_err() {
                            break;
                        }
                    }
                });
            }
        });
        let dir = tempfile::tempdir().unwrap();
        let ready = dir.path().join("port");
        let spec = RelaySpec {
            listen_port: 0,
            to_port: echo_port,
            one_way: Duration::from_millis(5),
        };
        let r = ready.clone();
        std::thread::spawn(move || serve(&spec, &r));
        let mut port = None;
        for _ in 0..200 {
            port = std::fs::read_to_string(&ready)
                .ok()
                .and_then(|t| t.trim().parse::<u16>().ok());
            if port.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut c = TcpStream::connect((Ipv4Addr::LOCALHOST, port.unwrap())).unwrap();
        c.set_nodelay(true).unwrap();
        for round in 0..5u8 {
            let t = Instant::now();
            c.write_all(&[round; 100]).unwrap();
            let mut got = [0u8; 100];
            c.read_exact(&mut got).unwrap();
            let rtt = t.elapsed();
            assert!(got.iter().all(|b| *b == round));
            // The floor is the relay's promise and holds however busy the machine is. There is
            // no tight ceiling: a shared machine can stall any thread for tens of milliseconds
            // (CI saw 78 ms). The ceiling only catches a relay that holds a packet many times
            // over; what it adds on top of the RTT is measured in benches/standby.sh.
            assert!(rtt >= Duration::from_millis(10), "round trip {rtt:?}");
            assert!(rtt < Duration::from_secs(2), "round trip {rtt:?}");
        }
    }
}
