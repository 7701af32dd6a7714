//! A small safe layer over libpq (`pq-sys`), the client library `pgbench` itself uses: the
//! ingest loader drives its single-row, multi-row and pipelined `INSERT`s through it
//! (see `experiment::ingest::pq_loader`), so pglab's client costs what pgbench's does.
//!
//! Only what the loader needs: a blocking connect and setup (`exec`, `exec_params`,
//! `prepare`), then
//! non-blocking sending (`send_prepared`, `pipeline_sync`, `flush`) and reading
//! (`consume_input`, `is_busy`, `next_result`), and a cancel handle usable from any thread.
//! Server notices are swallowed (libpq's default prints them on stderr, under the TUI).

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::ptr::{self, NonNull};

use pq_sys as pq;

mod bound;
pub use bound::Refused;

/// A libpq connection. Used by one thread at a time; it may move between threads.
pub struct PqConn {
    raw: NonNull<pq::PGconn>,
}

// SAFETY: libpq allows a PGconn to be used from any thread, one at a time; `&mut self` on
// every call that touches it (and `Send` without `Sync`) keeps it to one at a time.
unsafe impl Send for PqConn {}

extern "C" fn ignore_notice(_arg: *mut c_void, _message: *const c_char) {}

fn owned(s: *const c_char) -> String {
    if s.is_null() {
        return String::new();
    }
    // SAFETY: libpq returns NUL-terminated strings that live until the next call on the
    // connection or result; this copies before that.
    unsafe { CStr::from_ptr(s) }
        .to_string_lossy()
        .trim_end()
        .to_string()
}

fn c_string(s: &str, what: &str) -> Result<CString, String> {
    CString::new(s).map_err(|_| format!("{what} contains a NUL byte"))
}

/// A value for a libpq connection string: quoted, with `\` and `'` escaped.
pub(crate) fn conninfo_value(v: &str) -> String {
    let mut s = String::with_capacity(v.len() + 2);
    s.push('\'');
    for ch in v.chars() {
        if ch == '\\' || ch == '\'' {
            s.push('\\');
        }
        s.push(ch);
    }
    s.push('\'');
    s
}

impl PqConn {
    /// Connect (blocking) with a libpq connection string.
    pub fn connect(conninfo: &str) -> Result<PqConn, String> {
        let c = c_string(conninfo, "the connection string")?;
        // SAFETY: a valid C string; PQconnectdb returns a connection object or NULL.
        let raw = NonNull::new(unsafe { pq::PQconnectdb(c.as_ptr()) })
            .ok_or("libpq could not allocate a connection")?;
        let conn = PqConn { raw };
        // SAFETY: `raw` is a live connection object.
        if unsafe { pq::PQstatus(raw.as_ptr()) } != pq::ConnStatusType::CONNECTION_OK {
            return Err(conn.error_message());
        }
        // SAFETY: a live connection; the processor ignores its arguments.
        unsafe { pq::PQsetNoticeProcessor(raw.as_ptr(), Some(ignore_notice), ptr::null_mut()) };
        Ok(conn)
    }

    /// libpq's connect failure as one line: with several hosts libpq says what went wrong at
    /// each, on lines of their own.
    pub fn connect_failure(message: &str) -> String {
        message
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn ptr(&self) -> *mut pq::PGconn {
        self.raw.as_ptr()
    }

    /// The connection's last error, one line per libpq line, trailing newline removed.
    pub fn error_message(&self) -> String {
        // SAFETY: a live connection.
        owned(unsafe { pq::PQerrorMessage(self.ptr()) })
    }

    /// Run `sql` (blocking; several statements allowed); the last result's first value, if
    /// it returned rows.
    pub fn exec(&mut self, sql: &str) -> Result<Option<String>, String> {
        let c = c_string(sql, "the statement")?;
        // SAFETY: a live connection and a valid C string.
        let res = PqResult::new(unsafe { pq::PQexec(self.ptr(), c.as_ptr()) })
            .ok_or_else(|| self.error_message())?;
        res.check()?;
        Ok(res.value(0, 0))
    }

    /// Run one statement with text parameters (blocking; their types are the server's to
    /// infer); the first value, if it returned rows.
    pub fn exec_params(&mut self, sql: &str, params: &[&str]) -> Result<Option<String>, String> {
        let c = c_string(sql, "the statement")?;
        let values = params
            .iter()
            .map(|p| c_string(p, "a parameter"))
            .collect::<Result<Vec<CString>, String>>()?;
        let ptrs: Vec<*const c_char> = values.iter().map(|v| v.as_ptr()).collect();
        let n = c_int::try_from(ptrs.len()).map_err(|_| "too many parameters".to_string())?;
        // SAFETY: a live connection; `ptrs` holds `n` valid C strings owned by `values`,
        // alive until this returns; text format, so no lengths or formats are needed.
        let res = PqResult::new(unsafe {
            pq::PQexecParams(
                self.ptr(),
                c.as_ptr(),
                n,
                ptr::null(),
                ptrs.as_ptr(),
                ptr::null(),
                ptr::null(),
                0,
            )
        })
        .ok_or_else(|| self.error_message())?;
        res.check()?;
        Ok(res.value(0, 0))
    }

    /// Prepare `sql` as the statement `name` (blocking).
    pub fn prepare(&mut self, name: &CStr, sql: &str) -> Result<(), String> {
        let c = c_string(sql, "the statement")?;
        // SAFETY: a live connection, valid C strings, no parameter types given.
        let res = PqResult::new(unsafe {
            pq::PQprepare(self.ptr(), name.as_ptr(), c.as_ptr(), 0, ptr::null())
        })
        .ok_or_else(|| self.error_message())?;
        res.check()
    }

    /// Stop blocking on writes: `send_*` queue, `flush` sends what the socket takes.
    pub fn set_nonblocking(&mut self) -> Result<(), String> {
        // SAFETY: a live connection.
        match unsafe { pq::PQsetnonblocking(self.ptr(), 1) } {
            0 => Ok(()),
            _ => Err(self.error_message()),
        }
    }

    /// Enter pipeline mode (libpq ≥ 14): queries are sent without waiting, results read in
    /// order, a `pipeline_sync` ends each pipeline.
    pub fn enter_pipeline_mode(&mut self) -> Result<(), String> {
        // SAFETY: a live connection.
        match unsafe { pq::PQenterPipelineMode(self.ptr()) } {
            1 => Ok(()),
            _ => Err(self.error_message()),
        }
    }

    /// A descriptor of the connection's socket of our own (a `dup`), for waiting on
    /// readiness: libpq closes its own descriptor when the connection drops, and the number
    /// may then be reused; ours stays ours until dropped.
    pub fn socket(&self) -> std::io::Result<OwnedFd> {
        // SAFETY: a live connection.
        let fd = unsafe { pq::PQsocket(self.ptr()) };
        if fd < 0 {
            return Err(std::io::Error::other("the connection has no socket"));
        }
        // SAFETY: `fd` is libpq's open socket; F_DUPFD_CLOEXEC returns a new descriptor that
        // we own, or -1.
        let own = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
        if own < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `own` is a fresh descriptor nobody else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(own) })
    }

    /// A cancel handle for the query in flight.
    pub fn canceller(&self) -> Result<PqCancel, String> {
        // SAFETY: a live connection.
        NonNull::new(unsafe { pq::PQgetCancel(self.ptr()) })
            .map(|raw| PqCancel { raw })
            .ok_or_else(|| "libpq gave no cancel handle".to_string())
    }

    /// Queue the prepared statement `name` with text parameters.
    ///
    /// # Safety
    /// Every pointer in `params` must point to a NUL-terminated string that stays valid until
    /// this returns (libpq copies the values into its output buffer).
    pub unsafe fn send_prepared(
        &mut self,
        name: &CStr,
        params: &[*const c_char],
    ) -> Result<(), String> {
        let n = c_int::try_from(params.len()).map_err(|_| "too many parameters".to_string())?;
        // SAFETY: a live connection; the caller promises `params` holds `n` valid C strings
        // (text format, so no lengths or formats are needed).
        let ok = unsafe {
            pq::PQsendQueryPrepared(
                self.ptr(),
                name.as_ptr(),
                n,
                params.as_ptr(),
                ptr::null(),
                ptr::null(),
                0,
            )
        };
        if ok == 1 {
            Ok(())
        } else {
            Err(self.error_message())
        }
    }

    /// Queue `sql` on the simple protocol (one or more commands, text results), as
    /// `pgbench -M simple` sends its script's commands.
    pub fn send_query(&mut self, sql: &CStr) -> Result<(), String> {
        // SAFETY: a live connection and a valid C string.
        match unsafe { pq::PQsendQuery(self.ptr(), sql.as_ptr()) } {
            1 => Ok(()),
            _ => Err(self.error_message()),
        }
    }

    /// Mark the end of a pipeline (its results end with a `PipelineSync` one).
    pub fn pipeline_sync(&mut self) -> Result<(), String> {
        // SAFETY: a live connection.
        match unsafe { pq::PQpipelineSync(self.ptr()) } {
            1 => Ok(()),
            _ => Err(self.error_message()),
        }
    }

    /// Send what is queued; `true` once all of it went.
    pub fn flush(&mut self) -> Result<bool, String> {
        // SAFETY: a live connection.
        match unsafe { pq::PQflush(self.ptr()) } {
            0 => Ok(true),
            1 => Ok(false),
            _ => Err(self.error_message()),
        }
    }

    /// Read what the server has sent (never blocks).
    pub fn consume_input(&mut self) -> Result<(), String> {
        // SAFETY: a live connection.
        match unsafe { pq::PQconsumeInput(self.ptr()) } {
            1 => Ok(()),
            _ => Err(self.error_message()),
        }
    }

    /// Whether the connection is encrypted with TLS (OpenSSL may then hold decrypted bytes the
    /// socket no longer shows).
    pub fn tls(&self) -> bool {
        // SAFETY: a live connection.
        unsafe { pq::PQsslInUse(self.ptr()) == 1 }
    }

    /// Whether the session is outside any transaction and waiting (libpq's
    /// `PQtransactionStatus` is `PQTRANS_IDLE`): nothing it began is left open.
    pub fn transaction_idle(&self) -> bool {
        // SAFETY: a live connection object.
        unsafe { pq::PQtransactionStatus(self.ptr()) == pq::PGTransactionStatusType::PQTRANS_IDLE }
    }

    /// Whether the connection is gone (libpq closed it: EOF, a read error, lost sync).
    pub fn is_bad(&self) -> bool {
        // SAFETY: a live connection object.
        unsafe { pq::PQstatus(self.ptr()) == pq::ConnStatusType::CONNECTION_BAD }
    }

    /// A failed libpq call's message as a sentence: a lost connection said so whatever
    /// language or TLS layer libpq's message comes in.
    pub fn failure(&self, msg: &str) -> String {
        let first = msg.lines().next().unwrap_or(msg).trim();
        if self.is_bad() && !first.contains("connection to the server was lost") {
            format!("the connection to the server was lost: {first}")
        } else {
            describe(None, msg)
        }
    }

    /// Whether `next_result` would have to wait for more input.
    pub fn is_busy(&mut self) -> bool {
        // SAFETY: a live connection.
        unsafe { pq::PQisBusy(self.ptr()) != 0 }
    }

    /// The next result (call when not busy); `None` ends the current query's results.
    pub fn next_result(&mut self) -> Option<PqResult> {
        // SAFETY: a live connection.
        PqResult::new(unsafe { pq::PQgetResult(self.ptr()) })
    }
}

impl Drop for PqConn {
    fn drop(&mut self) {
        // SAFETY: the connection is live and dropped once.
        unsafe { pq::PQfinish(self.ptr()) }
    }
}

/// A query's result.
pub struct PqResult {
    raw: NonNull<pq::PGresult>,
}

/// The outcome of a result, as the loader needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// The end of a pipeline.
    Sync,
    /// Skipped: an earlier statement of the pipeline failed.
    Aborted,
    Failed,
}

impl PqResult {
    fn new(raw: *mut pq::PGresult) -> Option<PqResult> {
        NonNull::new(raw).map(|raw| PqResult { raw })
    }

    pub fn outcome(&self) -> Outcome {
        use pq::ExecStatusType::*;
        // SAFETY: a live result.
        match unsafe { pq::PQresultStatus(self.raw.as_ptr()) } {
            PGRES_COMMAND_OK | PGRES_TUPLES_OK | PGRES_EMPTY_QUERY => Outcome::Ok,
            PGRES_PIPELINE_SYNC => Outcome::Sync,
            PGRES_PIPELINE_ABORTED => Outcome::Aborted,
            _ => Outcome::Failed,
        }
    }

    fn field(&self, code: u8) -> Option<String> {
        // SAFETY: a live result; the field code is one of libpq's PG_DIAG_* letters.
        let p = unsafe { pq::PQresultErrorField(self.raw.as_ptr(), c_int::from(code)) };
        (!p.is_null()).then(|| owned(p))
    }

    /// The server's SQLSTATE and message, or libpq's own message (lost connection).
    pub fn error(&self) -> (Option<String>, String) {
        let code = self.field(b'C');
        let msg = self.field(b'M').unwrap_or_else(|| {
            // SAFETY: a live result.
            owned(unsafe { pq::PQresultErrorMessage(self.raw.as_ptr()) })
        });
        (code, msg)
    }

    /// `Err` with the described error unless the statement succeeded.
    pub fn check(&self) -> Result<(), String> {
        match self.outcome() {
            Outcome::Ok | Outcome::Sync => Ok(()),
            _ => {
                let (code, msg) = self.error();
                Err(describe(code.as_deref(), &msg))
            }
        }
    }

    /// Rows a command reported (`INSERT 0 5`, `DELETE 3`: its `PQcmdTuples`); 0 when none.
    pub fn affected(&self) -> u64 {
        // SAFETY: a live result; PQcmdTuples returns a string owned by it.
        owned(unsafe { pq::PQcmdTuples(self.raw.as_ptr()) })
            .parse()
            .unwrap_or(0)
    }

    /// Whether the result holds rows (a `SELECT`, `EXPLAIN`, `RETURNING`).
    pub fn has_rows(&self) -> bool {
        // SAFETY: a live result.
        unsafe { pq::PQresultStatus(self.raw.as_ptr()) == pq::ExecStatusType::PGRES_TUPLES_OK }
    }

    /// Rows the result holds.
    pub fn rows(&self) -> u64 {
        // SAFETY: a live result.
        u64::try_from(unsafe { pq::PQntuples(self.raw.as_ptr()) }).unwrap_or(0)
    }

    /// Row `row`, column `col` as text; `None` when absent or NULL.
    pub fn value(&self, row: c_int, col: c_int) -> Option<String> {
        let r = self.raw.as_ptr();
        // SAFETY: a live result; bounds are checked before reading the value.
        unsafe {
            if row >= pq::PQntuples(r)
                || col >= pq::PQnfields(r)
                || pq::PQgetisnull(r, row, col) == 1
            {
                return None;
            }
            Some(owned(pq::PQgetvalue(r, row, col)))
        }
    }
}

impl Drop for PqResult {
    fn drop(&mut self) {
        // SAFETY: the result is live and cleared once.
        unsafe { pq::PQclear(self.raw.as_ptr()) }
    }
}

/// An error from libpq said the way `describe_query_error` says tokio-postgres's.
pub fn describe(code: Option<&str>, msg: &str) -> String {
    match code {
        Some(code) => super::error::describe_server_error(code, msg),
        None => {
            let first = msg.lines().next().unwrap_or(msg).trim();
            if first.contains("server closed the connection")
                || first.contains("no connection to the server")
                || first.contains("could not receive data")
                || first.contains("could not send data")
                || first.contains("connection to server was lost")
            {
                format!("the connection to the server was lost: {first}")
            } else {
                first.to_string()
            }
        }
    }
}

/// Cancels the query in flight on its connection; usable from any thread.
pub struct PqCancel {
    raw: NonNull<pq::PGcancel>,
}

// SAFETY: libpq documents PQcancel as safe to call from another thread (or a signal
// handler) than the connection's; the handle is read-only after PQgetCancel.
unsafe impl Send for PqCancel {}
unsafe impl Sync for PqCancel {}

impl PqCancel {
    /// Ask the server to cancel (blocking: it opens a connection of its own).
    pub fn cancel(&self) -> Result<(), String> {
        let mut buf = [0 as c_char; 256];
        // SAFETY: a live cancel handle and a buffer of the size passed.
        let ok = unsafe { pq::PQcancel(self.raw.as_ptr(), buf.as_mut_ptr(), buf.len() as c_int) };
        if ok == 1 {
            Ok(())
        } else {
            Err(owned(buf.as_ptr()))
        }
    }
}

impl Drop for PqCancel {
    fn drop(&mut self) {
        // SAFETY: the handle is live and freed once.
        unsafe { pq::PQfreeCancel(self.raw.as_ptr()) }
    }
}

/// Whether a non-blocking socket has nothing to read now (a one-byte `MSG_PEEK`): what
/// libpq's `PQconsumeInput` cannot say, and what an edge-triggered wait needs to know before
/// it sleeps.
pub(crate) fn drained(fd: RawFd) -> bool {
    let mut b = 0u8;
    loop {
        // SAFETY: a one-byte buffer of our own; MSG_DONTWAIT never blocks.
        let n = unsafe {
            libc::recv(
                fd,
                (&mut b as *mut u8).cast(),
                1,
                libc::MSG_PEEK | libc::MSG_DONTWAIT,
            )
        };
        if n >= 0 {
            return false;
        }
        match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EAGAIN) => return true,
            // An error is for libpq to read and report: not drained.
            _ => return false,
        }
    }
}

/// Whether `fd` can take more data and whether it has something to read, now (never
/// blocks): `(writable, readable)`.
pub(crate) fn poll_now(fd: RawFd) -> std::io::Result<(bool, bool)> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLOUT | libc::POLLIN,
        revents: 0,
    };
    loop {
        // SAFETY: one valid pollfd; a zero timeout never blocks.
        let n = unsafe { libc::poll(&mut p, 1, 0) };
        if n >= 0 {
            let readable = p.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0;
            return Ok((p.revents & libc::POLLOUT != 0, readable));
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conninfo_values_are_quoted_and_escaped() {
        assert_eq!(conninfo_value("db"), "'db'");
        assert_eq!(conninfo_value("it's"), r"'it\'s'");
        assert_eq!(conninfo_value(r"a\b"), r"'a\\b'");
        assert_eq!(conninfo_value(""), "''");
    }

    #[test]
    fn lost_connections_are_named() {
        assert_eq!(
            describe(
                None,
                "server closed the connection unexpectedly\n\tThis probably means the server terminated abnormally"
            ),
            "the connection to the server was lost: server closed the connection unexpectedly"
        );
        assert!(
            describe(Some("57014"), "canceling statement due to user request")
                .starts_with("cancelled by request")
        );
    }

    #[test]
    fn a_refused_connection_is_an_error_not_a_panic() {
        // Port 1 on a socket directory that does not exist: libpq fails at once.
        let e = PqConn::connect("host=/nonexistent-pglab port=1 connect_timeout=1")
            .err()
            .expect("no server there");
        assert!(e.contains("/nonexistent-pglab"), "{e}");
    }
}
