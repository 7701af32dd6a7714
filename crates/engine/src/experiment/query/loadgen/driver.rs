//! A client thread's loop, pgbench's: one `poll(2)` over the sockets of the clients waiting
//! for a reply, then for each socket with something to read, libpq's `PQconsumeInput` and
//! `PQgetResult` called on the spot, and that client's next command sent before the next
//! socket is looked at. The poll has no timeout: a stop rings a bell among the sockets (see
//! [`super::bell`]; without one, the poll wakes every 50 ms to look). A stop cancels each
//! command in flight on the server (the cancels side by side), sends nothing more, and waits
//! 5 s at the most for them to end. A client opening a
//! new session after a standby ended its own (see `recovery`) has no socket to poll yet, so
//! the thread then looks every millisecond whether it is open. Over TLS a socket can be drained while OpenSSL still holds decrypted
//! bytes of the reply, so a thread with a TLS client waiting polls every millisecond and asks
//! libpq each time. Finished transactions reach the shared count once per wake, not once
//! each: the progress line and the per-second series read it a few times a second.

use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::bell::StopBell;
use super::client::{Client, Next};
use super::recovery::Resume;
use super::{ClientMsg, ClientResult, Failure, Go, Plan, Workload, connect};

/// The longest a poll sleeps before looking at the stop token again, when no bell rings it.
const STOP_LOOK: Duration = Duration::from_millis(50);
/// How long the commands cancelled at a stop may take to end.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// A client thread: connect its clients, report each, wait for the start
/// signal, run them, report what each did.
pub(super) fn thread_main(
    work: Arc<Workload>,
    ids: Vec<usize>,
    stop: CancellationToken,
    go: watch::Receiver<Option<Go>>,
    reports: mpsc::UnboundedSender<(usize, ClientMsg)>,
) {
    let report = |id, m| {
        let _ = reports.send((id, m));
    };
    let plan = match Plan::of(&work) {
        Ok(p) => p,
        Err(e) => {
            return ids
                .iter()
                .for_each(|&id| report(id, ClientMsg::NotReady(e.clone())));
        }
    };
    let mut clients = Vec::with_capacity(ids.len());
    // One after the other on this thread, as each pgbench thread opens its own clients'.
    for id in &ids {
        match open(&work, &plan, *id) {
            Ok(c) => {
                report(*id, ClientMsg::Ready);
                clients.push(c);
            }
            Err(e) => report(*id, ClientMsg::NotReady(e)),
        }
    }
    let go = match wait_for_go(go, &stop) {
        Ok(Some(go)) => go,
        Ok(None) => {
            for c in clients {
                report(c.id, ClientMsg::Done(Box::new(ClientResult::nothing())));
            }
            return;
        }
        Err(e) => {
            let e = format!("cannot wait for the start: {e}");
            return clients
                .iter()
                .for_each(|c| report(c.id, ClientMsg::NotReady(e.clone())));
        }
    };
    let mut driver = Driver {
        shared: Shared {
            work: &work,
            plan: &plan,
            deadline: go.deadline,
            stop: &stop,
            bell: StopBell::new(&stop).ok(),
            ended: 0,
        },
        clients,
    };
    driver.run();
    for c in driver.clients {
        report(c.id, ClientMsg::Done(Box::new(c.result())));
    }
}

/// Client `id`'s session, set up, with the plan's statements prepared when they go prepared.
fn open(work: &Workload, plan: &Plan, id: usize) -> Result<Client, String> {
    let (conn, cancel) = connect(work)?;
    let mut c = Client::new(id, work, conn, cancel)?;
    c.prepare_all(plan)?;
    Ok(c)
}

/// Block until the start signal (None: stopped first).
fn wait_for_go(
    mut go: watch::Receiver<Option<Go>>,
    stop: &CancellationToken,
) -> std::io::Result<Option<Go>> {
    // A runtime without drivers: the watch and the token need neither sockets nor timers.
    let rt = tokio::runtime::Builder::new_current_thread().build()?;
    Ok(rt.block_on(async {
        tokio::select! {
            g = go.wait_for(Option::is_some) => g.ok().and_then(|g| *g),
            _ = stop.cancelled() => None,
        }
    }))
}

/// What the clients of a thread share while they run.
struct Shared<'a> {
    work: &'a Arc<Workload>,
    plan: &'a Plan,
    deadline: Instant,
    stop: &'a CancellationToken,
    /// Rings at the stop; None: it could not be made, and the poll wakes to look.
    bell: Option<StopBell>,
    /// Transactions ended since the shared count was last told.
    ended: u64,
}

struct Driver<'a> {
    shared: Shared<'a>,
    clients: Vec<Client>,
}

impl Driver<'_> {
    fn run(&mut self) {
        let now = Instant::now();
        for c in &mut self.clients {
            c.clock_from(now);
            self.shared.next_transaction(c);
        }
        let mut fds: Vec<libc::pollfd> = Vec::with_capacity(self.clients.len());
        let mut at: Vec<usize> = Vec::with_capacity(self.clients.len());
        let mut grace: Option<Instant> = None;
        loop {
            self.shared.tell_ended();
            let reconnecting = self.reconnected();
            let tls = self.watch(&mut fds, &mut at);
            if fds.is_empty() && !reconnecting {
                break;
            }
            let timeout = self.timeout(tls || reconnecting, grace);
            if let (Some(b), None) = (&self.shared.bell, grace) {
                fds.push(libc::pollfd {
                    fd: b.fd(),
                    events: libc::POLLIN,
                    revents: 0,
                });
            }
            if let Err(e) = poll(&mut fds, timeout) {
                self.fail_waiting(&format!("waiting for the server: {e}"));
                break;
            }
            if grace.is_none() && self.shared.stopped() {
                self.cancel_waiting();
                grace = Some(Instant::now() + STOP_GRACE);
            }
            if grace.is_some_and(|g| Instant::now() >= g) {
                break;
            }
            // The bell, last, has no client: the zip ends before it.
            for (p, &i) in fds.iter().zip(&at) {
                let c = &mut self.clients[i];
                if p.revents != 0 || c.tls {
                    self.shared.serve(c, p.revents);
                }
            }
        }
        self.shared.tell_ended();
    }

    /// How long the poll may sleep (None: until a socket has something): 1 ms when a client
    /// must be looked at without its socket (`look`: TLS, a session being opened), never past
    /// the grace after a stop, and without a bell, `STOP_LOOK`.
    fn timeout(&self, look: bool, grace: Option<Instant>) -> Option<Duration> {
        let mut timeout = if look {
            Some(Duration::from_millis(1))
        } else if self.shared.bell.is_some() {
            None
        } else {
            Some(STOP_LOOK)
        };
        if let Some(g) = grace {
            let left = g.saturating_duration_since(Instant::now());
            timeout = Some(timeout.map_or(left, |t| t.min(left)));
        }
        timeout
    }

    /// The sockets of the clients waiting for the server (`at`: their clients); whether one of
    /// them uses TLS.
    fn watch(&self, fds: &mut Vec<libc::pollfd>, at: &mut Vec<usize>) -> bool {
        fds.clear();
        at.clear();
        let mut tls = false;
        for (i, c) in self.clients.iter().enumerate().filter(|(_, c)| c.waiting) {
            let write = if c.want_write { libc::POLLOUT } else { 0 };
            fds.push(libc::pollfd {
                fd: c.fd.as_raw_fd(),
                events: libc::POLLIN | write,
                revents: 0,
            });
            at.push(i);
            tls |= c.tls;
        }
        tls
    }

    /// Clients whose new session is open go on (see `recovery`); whether one is still
    /// being opened.
    fn reconnected(&mut self) -> bool {
        let mut pending = false;
        for c in self.clients.iter_mut().filter(|c| c.reconnecting.is_some()) {
            match c.reconnected() {
                None => pending = true,
                Some(Ok(())) => {
                    c.clock_from(Instant::now());
                    self.shared.next_transaction(c);
                }
                Some(Err(e)) => c.error = Some(e),
            }
        }
        pending
    }

    /// Ask the server to cancel every command in flight (a stop), all at once: each cancel
    /// is a connection of its own.
    fn cancel_waiting(&self) {
        std::thread::scope(|s| {
            for c in self.clients.iter().filter(|c| c.waiting) {
                let cancel = &c.cancel;
                s.spawn(move || cancel.cancel());
            }
        });
    }

    /// End every waiting client with `why`.
    fn fail_waiting(&mut self, why: &str) {
        for c in self.clients.iter_mut().filter(|c| c.waiting) {
            c.waiting = false;
            c.error = Some(why.to_string());
        }
    }
}

impl Shared<'_> {
    /// Whether the stop came (the bell's flag: no lock on every transaction).
    fn stopped(&self) -> bool {
        match &self.bell {
            Some(b) => b.rang(),
            None => self.stop.is_cancelled(),
        }
    }

    /// Add the transactions ended since last time to the count all threads share.
    fn tell_ended(&mut self) {
        if self.ended > 0 {
            self.work.done.fetch_add(self.ended, Ordering::Relaxed);
            self.ended = 0;
        }
    }

    /// A waiting client whose socket woke the poll (`revents`; TLS: every wake).
    fn serve(&mut self, c: &mut Client, revents: i16) {
        if c.want_write
            && revents & libc::POLLOUT != 0
            && let Err(f) = c.flush()
        {
            return self.failed(c, f);
        }
        let Some(reply) = c.read() else {
            return;
        };
        if self.stopped() {
            // Stopped: nothing more is sent (it would not be cancelled).
            c.waiting = false;
            return;
        }
        if c.rolling_back {
            c.rolled_back();
            return match reply {
                Ok(_) => {
                    c.clock_from(Instant::now());
                    self.next_transaction(c);
                }
                Err(f) => self.failed(c, f),
            };
        }
        let next = reply.and_then(|rows| c.replied(self.plan, rows, Instant::now()));
        match next {
            Ok(Next::Waiting) => {}
            Ok(Next::Ended) => {
                self.ended += 1;
                self.next_transaction(c);
            }
            Err(f) => self.failed(c, f),
        }
    }

    /// Start the client's next transaction, unless the deadline passed or a stop came.
    fn next_transaction(&mut self, c: &mut Client) {
        loop {
            c.waiting = false;
            if c.clock() >= self.deadline || self.stopped() {
                return;
            }
            match c.start(self.plan) {
                Ok(Next::Waiting) => {
                    c.waiting = true;
                    return;
                }
                Ok(Next::Ended) => self.ended += 1,
                Err(f) => {
                    if !self.resume(c, f) {
                        return;
                    }
                }
            }
        }
    }

    /// A failed transaction: the client goes on (see `recovery`) or ends with the failure's
    /// sentence; a stop ends it without one.
    fn failed(&mut self, c: &mut Client, f: Failure) {
        c.waiting = false;
        if self.resume(c, f) {
            self.next_transaction(c);
        }
    }

    /// After `f`: whether the client starts its next transaction now (its clock restarted).
    /// Otherwise it ended, or waits for its `ROLLBACK` or its new session.
    fn resume(&mut self, c: &mut Client, f: Failure) -> bool {
        if self.stopped() {
            return false;
        }
        match c.go_on(self.work, f) {
            Ok(Resume::Now) => {
                c.clock_from(Instant::now());
                true
            }
            Ok(Resume::AfterRollback) => {
                c.waiting = true;
                false
            }
            Ok(Resume::AfterReconnect) => false,
            Err(e) => {
                c.error = Some(e);
                false
            }
        }
    }
}

/// Wait until one of `fds` is ready or `timeout` passed (None: no timeout; an interrupted
/// wait is a wake).
fn poll(fds: &mut [libc::pollfd], timeout: Option<Duration>) -> std::io::Result<()> {
    let ms = timeout.map_or(-1, |t| {
        libc::c_int::try_from(t.as_millis()).unwrap_or(libc::c_int::MAX)
    });
    // SAFETY: `fds` is a valid slice of pollfd for its length.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
    if n < 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
    Ok(())
}
