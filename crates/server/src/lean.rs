//! A session over a local unix socket that costs the client as few system calls per round
//! trip as libpq: the socket is registered with the runtime for readability only.
//!
//! tokio registers its own sockets for both directions, and epoll is edge-triggered, so every
//! write of a query wakes the thread once more for the "writable" edge it causes: per
//! single-row `INSERT` the loading client did `sendto`, `epoll_wait` (writable), `epoll_wait`
//! (readable), `recvfrom`, where `pgbench` does `sendto`, `recvfrom` and a `ppoll` only when
//! the reply has not arrived yet. Here a write goes straight to the socket; should the
//! socket's buffer be full (a large `COPY` chunk), the thread waits in `poll(2)` for room, as
//! libpq does. Meant for a thread of its own that waits for the server's reply before
//! writing more (the ingest clients): nothing else on that thread is delayed by the wait,
//! and the server, reading what it was sent, frees the room.

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};

/// A connected unix socket, non-blocking, watched for readability only.
pub(crate) struct LeanStream {
    fd: AsyncFd<UnixStream>,
}

impl LeanStream {
    /// Connect to the socket file `path` (`DIR/.s.PGSQL.PORT`). Must run inside a runtime.
    pub(crate) fn connect(path: &std::path::Path) -> io::Result<LeanStream> {
        let s = UnixStream::connect(path)?;
        s.set_nonblocking(true)?;
        // SAFETY: the AsyncFd owns the stream, so its descriptor stays open and the same
        // for the AsyncFd's whole life.
        let fd = unsafe { AsyncFd::register_with_interest(s, Interest::READABLE) }
            .map_err(|e| io::Error::other(e.to_string()))?;
        Ok(LeanStream { fd })
    }
}

/// Wait until `fd` can take more bytes (the server is reading what it was sent).
fn wait_writable(fd: &UnixStream) -> io::Result<()> {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    };
    loop {
        // SAFETY: one valid pollfd, for a socket this stream owns.
        let r = unsafe { libc::poll(&mut p, 1, -1) };
        if r >= 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

impl AsyncRead for LeanStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.fd.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            let len = unfilled.len();
            match guard.try_io(|fd| fd.get_ref().read(unfilled)) {
                Ok(Ok(n)) => {
                    // A short read drained the socket: no need to find that out with
                    // another read (tokio's own streams do the same).
                    if n > 0 && n < len {
                        guard.clear_ready();
                    }
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                // Would block: readiness was cleared, wait for the next edge.
                Err(_) => continue,
            }
        }
    }
}

impl AsyncWrite for LeanStream {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let s = self.fd.get_ref();
        loop {
            match (&*s).write(data) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => wait_writable(s)?,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                r => return Poll::Ready(r),
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.fd.get_ref().shutdown(Shutdown::Write))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn bytes_go_both_ways_and_a_full_buffer_waits_for_room() {
        let dir = std::env::temp_dir().join(format!("pglab-lean-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join(".s.PGSQL.1");
        let _ = std::fs::remove_file(&path);
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        // An echo server that reads 4 MB (more than a socket buffer holds) and answers.
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut got = vec![0u8; 4 << 20];
            s.read_exact(&mut got).unwrap();
            s.write_all(&got[..5]).unwrap();
        });
        let mut c = LeanStream::connect(&path).unwrap();
        let big = vec![7u8; 4 << 20];
        c.write_all(&big).await.unwrap();
        let mut reply = [0u8; 5];
        c.read_exact(&mut reply).await.unwrap();
        assert_eq!(reply, [7; 5]);
        server.join().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
