//! One client of a thread: its session, and its transaction in progress as a cursor over the
//! plan's steps. The driver sends nothing itself: it tells a client when to start a
//! transaction and when its socket has something, and the client sends its next command as
//! soon as the last one's results end (`\set`s in between are evaluated on the way).

use std::ffi::{CStr, c_char};
use std::io::Write;
use std::os::fd::OwnedFd;
use std::sync::mpsc::Receiver;
use std::time::Instant;

use hdrhistogram::Histogram;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::bind::{Bound, Values};
use super::{ClientResult, Failure, Plan, Ready, Step, Workload, expr, histogram, recovery};
use crate::experiment::query::protocol::Protocol;
use crate::experiment::query::script::Part;
use crate::server::libpq::{Outcome, PqCancel, PqConn};

/// The command in flight.
struct Sent {
    t0: Instant,
    /// One of the workload's statements (timed), not the frame's `BEGIN`/`ROLLBACK`.
    statement: bool,
    rows: u64,
    /// The first failed result.
    failed: Option<Failure>,
}

/// Where a client's transaction is after a step.
pub(super) enum Next {
    /// A command is in flight: wait for its socket.
    Waiting,
    /// The transaction ended, counted.
    Ended,
}

pub(super) struct Client {
    pub id: usize,
    pub conn: PqConn,
    /// Cancels the command in flight on the server (its session's: renewed with it).
    pub cancel: PqCancel,
    /// Our own descriptor of the session's socket, which the driver polls.
    pub fd: OwnedFd,
    /// TLS in use: OpenSSL may hold decrypted bytes the socket no longer shows.
    pub tls: bool,
    /// What is queued has yet to leave for the server (its socket was full).
    pub want_write: bool,
    /// A command is in flight.
    pub waiting: bool,
    /// Why it stopped early: a sentence.
    pub error: Option<String>,
    vars: Vec<i64>,
    rng: ChaCha8Rng,
    /// The text of the command being sent, NUL-terminated; or the bound values' texts, each
    /// NUL-terminated (at `offsets`, pointed to by `ptrs`). Reused: no allocation per command.
    buf: Vec<u8>,
    offsets: Vec<usize>,
    ptrs: Vec<*const c_char>,
    /// The session has the plan's statements prepared.
    pub prepared: bool,
    /// Failures for a forgotten prepared statement since the last transaction that ended.
    pub forgotten_in_a_row: u32,
    /// Times the session prepared its statements again after the server forgot them.
    pub reprepared: u64,
    /// The next step of the transaction in progress.
    next: usize,
    /// When the transaction in progress began (its predecessor's end).
    t0: Instant,
    /// Rows the transaction in progress returned so far.
    tx_rows: u64,
    sent: Option<Sent>,
    transactions: u64,
    rows: u64,
    latency_us: Histogram<u64>,
    statement_us: Histogram<u64>,
    /// Statements the standby cancelled, and sessions it ended, for conflicts with recovery.
    pub conflicts: (u64, u64),
    /// After a conflict inside a transaction: its `ROLLBACK` is in flight.
    pub rolling_back: bool,
    /// After the standby ended the session: a new one being opened on a thread of its own, and
    /// the failure that ended the old one.
    pub reconnecting: Option<(Receiver<Opened>, String)>,
}

/// A session opened (see `super::connect`), or why not.
pub(super) type Opened = Result<(PqConn, PqCancel), String>;

fn micros(since: Instant, now: Instant) -> u64 {
    u64::try_from(now.duration_since(since).as_micros())
        .unwrap_or(u64::MAX)
        .max(1)
}

impl Client {
    pub(crate) fn new(
        id: usize,
        work: &Workload,
        conn: PqConn,
        cancel: PqCancel,
    ) -> Result<Client, String> {
        let fd = conn
            .socket()
            .map_err(|e| format!("cannot watch the connection's socket: {e}"))?;
        let mut vars = vec![0; work.script.vars.len()];
        vars[0] = id as i64;
        if let Some(s) = vars.get_mut(1) {
            *s = 1;
        }
        Ok(Client {
            id,
            tls: conn.tls(),
            conn,
            cancel,
            fd,
            want_write: false,
            waiting: false,
            error: None,
            vars,
            rng: ChaCha8Rng::seed_from_u64(work.seed ^ (id as u64 + 1)),
            buf: Vec::new(),
            offsets: Vec::new(),
            ptrs: Vec::new(),
            prepared: false,
            forgotten_in_a_row: 0,
            reprepared: 0,
            next: 0,
            t0: Instant::now(),
            tx_rows: 0,
            sent: None,
            transactions: 0,
            rows: 0,
            latency_us: histogram(),
            statement_us: histogram(),
            conflicts: (0, 0),
            rolling_back: false,
            reconnecting: None,
        })
    }

    /// A new session in place of one the server ended (its socket and canceller with it).
    pub(crate) fn replace_session(&mut self, conn: PqConn, cancel: PqCancel) -> Result<(), String> {
        self.fd = conn
            .socket()
            .map_err(|e| format!("cannot watch the connection's socket: {e}"))?;
        self.tls = conn.tls();
        self.conn = conn;
        self.cancel = cancel;
        self.prepared = false;
        Ok(())
    }

    /// Transactions are timed from `now` on (the common start, or after a failure the
    /// client went on from).
    pub(crate) fn clock_from(&mut self, now: Instant) {
        self.t0 = now;
    }

    /// When the last transaction ended (or the clock started): the next one's start.
    pub(crate) fn clock(&self) -> Instant {
        self.t0
    }

    /// The command in flight was the `ROLLBACK` after a conflict: it ended.
    pub(crate) fn rolled_back(&mut self) {
        self.rolling_back = false;
        self.sent = None;
    }

    /// Begin a transaction (timed from the last one's end): its first command sent, or ended
    /// at once when it has none to send.
    pub(crate) fn start(&mut self, plan: &Plan) -> Result<Next, Failure> {
        self.next = 0;
        self.tx_rows = 0;
        self.sent = None;
        self.proceed(plan)
    }

    /// Read what the socket has; `Some` once the command's results ended: its rows, or its
    /// first failure.
    pub(crate) fn read(&mut self) -> Option<Result<u64, Failure>> {
        if let Err(e) = self.conn.consume_input() {
            self.sent = None;
            return Some(Err(self.conn.failure(&e).into()));
        }
        loop {
            if self.conn.is_busy() {
                return None;
            }
            let Some(r) = self.conn.next_result() else {
                // Kept until `replied` has timed it.
                let sent = self.sent.as_mut()?;
                return Some(match sent.failed.take() {
                    Some(f) => Err(f),
                    None => Ok(sent.rows),
                });
            };
            let Some(sent) = self.sent.as_mut() else {
                continue;
            };
            match r.outcome() {
                Outcome::Failed | Outcome::Aborted => {
                    if sent.failed.is_none() {
                        sent.failed = recovery::failure(&r);
                    }
                }
                _ => sent.rows += r.rows(),
            }
        }
    }

    /// Send what the socket would not take before (`want_write` says whether some is left).
    pub(crate) fn flush(&mut self) -> Result<(), Failure> {
        match self.conn.flush() {
            Ok(done) => {
                self.want_write = !done;
                Ok(())
            }
            Err(e) => Err(self.conn.failure(&e).into()),
        }
    }

    /// The command in flight ended with `rows`: timed (a statement of the workload), and the
    /// transaction's next command sent, or the transaction ended.
    pub(crate) fn replied(
        &mut self,
        plan: &Plan,
        rows: u64,
        now: Instant,
    ) -> Result<Next, Failure> {
        if let Some(s) = &self.sent
            && s.statement
        {
            self.statement_us.saturating_record(micros(s.t0, now));
        }
        self.sent = None;
        self.tx_rows += rows;
        self.proceed(plan)
    }

    /// Run the steps from the next one until one sends a command; at their end the
    /// transaction is counted.
    fn proceed(&mut self, plan: &Plan) -> Result<Next, Failure> {
        while let Some(step) = plan.steps.get(self.next).copied() {
            self.next += 1;
            let ready = match step {
                Step::Begin | Step::End => {
                    let f = plan.frame.as_ref().map(|f| match step {
                        Step::Begin => &f.0,
                        _ => &f.1,
                    });
                    if let Some(sql) = f {
                        self.send(sql, false)?;
                        return Ok(Next::Waiting);
                    }
                    continue;
                }
                Step::Command(i) => plan.commands.get(i),
                Step::Draw => self.draw(plan),
            };
            if let Some(r) = ready
                && self.command(r, plan)?
            {
                return Ok(Next::Waiting);
            }
        }
        let now = Instant::now();
        self.latency_us.saturating_record(micros(self.t0, now));
        self.transactions += 1;
        self.forgotten_in_a_row = 0;
        self.rows += self.tx_rows;
        self.t0 = now;
        Ok(Next::Ended)
    }

    /// A weighted mix's SQL command, drawn by weight.
    fn draw<'p>(&mut self, plan: &'p Plan) -> Option<&'p Ready> {
        let total = plan.mix.last().map_or(1, |m| m.1);
        let draw = rand::RngExt::random_range(&mut self.rng, 0..total);
        let at = plan.mix.partition_point(|m| m.1 <= draw);
        plan.mix.get(at).and_then(|m| plan.commands.get(m.0))
    }

    /// One command of the workload: a `\set` evaluated (false), or a SQL command sent (true).
    fn command(&mut self, c: &Ready, plan: &Plan) -> Result<bool, Failure> {
        match c {
            Ready::Set { var, expr } => {
                let v = expr::eval(expr, &self.vars, &mut self.rng)?;
                self.vars[*var] = v;
                Ok(false)
            }
            Ready::Choice(sets) => {
                let i = rand::RngExt::random_range(&mut self.rng, 0..sets.len().max(1));
                match sets.get(i) {
                    Some(c) => self.command(c, plan),
                    None => Ok(false),
                }
            }
            Ready::Fixed(sql) => self.send(sql, true).map(|()| true),
            Ready::Bound(b) => self.send_bound(b, plan).map(|()| true),
            Ready::Forget(sql) => {
                self.prepared = false;
                self.send(sql, true).map(|()| true)
            }
            Ready::Template(parts) => self.send_template(parts).map(|()| true),
        }
    }

    /// A template's text with the variables written in, sent.
    fn send_template(&mut self, parts: &[Part]) -> Result<(), Failure> {
        // One buffer for the text, reused: no allocation per command.
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        for p in parts {
            match p {
                Part::Text(t) => buf.extend_from_slice(t.as_bytes()),
                Part::Var(v) => {
                    let n = self.vars.get(*v).copied().unwrap_or(0);
                    let _ = write!(buf, "{n}");
                }
            }
        }
        buf.push(0);
        let r = match CStr::from_bytes_with_nul(&buf) {
            Ok(sql) => self.send(sql, true),
            Err(_) => Err("a command holds a NUL byte".to_string().into()),
        };
        self.buf = buf;
        r
    }

    /// Prepare the plan's bound statements in this session (blocking: nothing is in flight);
    /// a statement the server refuses is a sentence with its line.
    pub(crate) fn prepare_all(&mut self, plan: &Plan) -> Result<(), String> {
        if plan.protocol != Protocol::Prepared {
            return Ok(());
        }
        for b in plan.bound() {
            let n = self
                .conn
                .prepare_described(&b.name, &b.sql)
                .map_err(|e| super::bind::refusal(b, &e))?;
            if n != b.params() {
                return Err(format!(
                    "{}: the server finds {n} parameters in the statement and pglab has values for {}",
                    b.label,
                    b.params()
                ));
            }
        }
        self.prepared = true;
        Ok(())
    }

    /// A bound statement's values (from the variables, or one value set drawn) as the
    /// pointers libpq reads, then the statement sent on the extended protocol.
    fn send_bound(&mut self, b: &Bound, plan: &Plan) -> Result<(), Failure> {
        if plan.protocol == Protocol::Prepared && !self.prepared {
            self.prepare_all(plan).map_err(Failure::from)?;
        }
        let mut buf = std::mem::take(&mut self.buf);
        let mut ptrs = std::mem::take(&mut self.ptrs);
        buf.clear();
        ptrs.clear();
        match &b.values {
            Values::None => {}
            Values::Vars(vars) => {
                self.offsets.clear();
                for v in vars {
                    self.offsets.push(buf.len());
                    let _ = write!(buf, "{}", self.vars.get(*v).copied().unwrap_or(0));
                    buf.push(0);
                }
                // After the last write: `buf` no longer moves.
                ptrs.extend(self.offsets.iter().map(|&at| buf[at..].as_ptr().cast()));
            }
            Values::Sets(sets) => {
                let i = rand::RngExt::random_range(&mut self.rng, 0..sets.len().max(1));
                if let Some(set) = sets.get(i) {
                    ptrs.extend(
                        set.iter()
                            .map(|v| v.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())),
                    );
                }
            }
        }
        self.sent = Some(Sent {
            t0: Instant::now(),
            statement: true,
            rows: 0,
            failed: None,
        });
        // SAFETY: each pointer is null or a NUL-terminated text in `buf` (not touched until
        // this returns) or in the plan's value sets, which outlive the call.
        let r = unsafe {
            match plan.protocol {
                Protocol::Prepared => self.conn.send_prepared(&b.name, &ptrs),
                _ => self.conn.send_query_params(&b.sql, &ptrs),
            }
        };
        self.buf = buf;
        self.ptrs = ptrs;
        if let Err(e) = r {
            self.sent = None;
            return Err(self.conn.failure(&e).into());
        }
        self.flush()
    }

    /// Send one command on the simple protocol, and all of it the socket takes now.
    pub(super) fn send(&mut self, sql: &CStr, statement: bool) -> Result<(), Failure> {
        self.sent = Some(Sent {
            t0: Instant::now(),
            statement,
            rows: 0,
            failed: None,
        });
        if let Err(e) = self.conn.send_query(sql) {
            self.sent = None;
            return Err(self.conn.failure(&e).into());
        }
        self.flush()
    }

    /// What it did, when it stopped.
    pub(crate) fn result(self) -> ClientResult {
        ClientResult {
            transactions: self.transactions,
            rows: self.rows,
            latency_us: self.latency_us,
            statement_us: self.statement_us,
            ended: self.t0,
            error: self.error,
            cancelled: self.conflicts.0,
            terminated: self.conflicts.1,
            reprepared: self.reprepared,
        }
    }
}
