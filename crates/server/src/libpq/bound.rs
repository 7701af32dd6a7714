//! The extended protocol's calls the load generator needs: a statement prepared under a name
//! with the server's count of its parameters (`PQprepare`, `PQdescribePrepared`), and an
//! unnamed statement sent with its values bound (`PQsendQueryParams`). Values go as text with
//! no type given: the server types each parameter from its own parse, as pgbench's are.

use std::ffi::{CStr, c_char, c_int};
use std::ptr;

use pq_sys as pq;

use super::{PqConn, PqResult};

/// The server refused to prepare a statement: its SQLSTATE and the sentence.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{text}")]
pub struct Refused {
    pub code: Option<String>,
    pub text: String,
}

impl PqConn {
    fn refused(&self, res: Option<PqResult>) -> Result<PqResult, Refused> {
        let Some(res) = res else {
            return Err(Refused {
                code: None,
                text: self.failure(&self.error_message()),
            });
        };
        match res.check() {
            Ok(()) => Ok(res),
            Err(text) => Err(Refused {
                code: res.error().0,
                text,
            }),
        }
    }

    /// Prepare `sql` as the statement `name`, blocking even on a non-blocking connection (no
    /// other command may be in flight); the number of parameters the server's parse found.
    pub fn prepare_described(&mut self, name: &CStr, sql: &CStr) -> Result<usize, Refused> {
        // SAFETY: a live connection.
        let nonblocking = unsafe { pq::PQisnonblocking(self.ptr()) } == 1;
        if nonblocking {
            // SAFETY: a live connection; nothing is queued (the caller's contract).
            unsafe { pq::PQsetnonblocking(self.ptr(), 0) };
        }
        let described = self.prepare_then_describe(name, sql);
        if nonblocking {
            // SAFETY: a live connection.
            unsafe { pq::PQsetnonblocking(self.ptr(), 1) };
        }
        described
    }

    fn prepare_then_describe(&mut self, name: &CStr, sql: &CStr) -> Result<usize, Refused> {
        // SAFETY: a live connection, valid C strings, no parameter types given.
        let res = PqResult::new(unsafe {
            pq::PQprepare(self.ptr(), name.as_ptr(), sql.as_ptr(), 0, ptr::null())
        });
        self.refused(res)?;
        // SAFETY: a live connection and a valid C string.
        let res = PqResult::new(unsafe { pq::PQdescribePrepared(self.ptr(), name.as_ptr()) });
        let described = self.refused(res)?;
        // SAFETY: a live result.
        Ok(usize::try_from(unsafe { pq::PQnparams(described.raw.as_ptr()) }).unwrap_or(0))
    }

    /// Queue `sql` as an unnamed statement with text parameters (parsed, bound and executed).
    ///
    /// # Safety
    /// Every pointer in `params` must be null (SQL NULL) or point to a NUL-terminated string
    /// that stays valid until this returns (libpq copies the values into its output buffer).
    pub unsafe fn send_query_params(
        &mut self,
        sql: &CStr,
        params: &[*const c_char],
    ) -> Result<(), String> {
        let n = c_int::try_from(params.len()).map_err(|_| "too many parameters".to_string())?;
        // SAFETY: a live connection and a valid C string; the caller promises `params` holds
        // `n` valid C strings or nulls (text format, so no lengths or formats are needed).
        let ok = unsafe {
            pq::PQsendQueryParams(
                self.ptr(),
                sql.as_ptr(),
                n,
                ptr::null(),
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
}
