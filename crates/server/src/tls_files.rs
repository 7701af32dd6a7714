//! The files of libpq's TLS parameters besides the root certificate: the client certificate
//! and key (`sslcert`, `sslkey`; by default `~/.postgresql/postgresql.crt` and
//! `postgresql.key` when both exist) and the certificate revocation list (`sslcrl`; by
//! default `~/.postgresql/root.crl` when it exists). A file named explicitly must be there;
//! a key readable by group or others is refused, as libpq refuses it.

use std::path::{Path, PathBuf};

use rustls::pki_types::{CertificateDer, CertificateRevocationListDer, PrivateKeyDer};

use super::TargetError;
use super::conninfo::ConnParams;

fn home_file(name: &str) -> Option<PathBuf> {
    directories::BaseDirs::new().map(|b| b.home_dir().join(".postgresql").join(name))
}

fn read(path: &Path, what: &str, key: &str) -> Result<Vec<u8>, TargetError> {
    std::fs::read(path).map_err(|e| {
        TargetError::Tls(format!(
            "cannot read the {what} {}: {e} (set {key}=FILE)",
            path.display()
        ))
    })
}

/// The revocation lists to check a verified server certificate against.
pub(crate) fn crls(
    explicit: Option<&Path>,
) -> Result<Vec<CertificateRevocationListDer<'static>>, TargetError> {
    let Some(path) = explicit
        .map(Path::to_path_buf)
        .or_else(|| home_file("root.crl").filter(|p| p.is_file()))
    else {
        return Ok(Vec::new());
    };
    let data = read(&path, "certificate revocation list", "sslcrl")?;
    let crls: Vec<_> = rustls_pemfile::crls(&mut &data[..])
        .collect::<Result<_, _>>()
        .map_err(|e| TargetError::Tls(format!("{} is not a PEM CRL file: {e}", path.display())))?;
    if crls.is_empty() {
        return Err(TargetError::Tls(format!(
            "{} holds no PEM certificate revocation list (sslcrl)",
            path.display()
        )));
    }
    Ok(crls)
}

/// The client certificate chain and key to offer, if any.
pub(crate) fn client_cert(
    p: &ConnParams,
) -> Result<Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>, TargetError> {
    let (cert, key) = match (&p.sslcert, &p.sslkey) {
        (None, None) => match (home_file("postgresql.crt"), home_file("postgresql.key")) {
            (Some(c), Some(k)) if c.is_file() && k.is_file() => (c, k),
            _ => return Ok(None),
        },
        (Some(c), Some(k)) => (c.clone(), k.clone()),
        (Some(c), None) => (
            c.clone(),
            home_file("postgresql.key").unwrap_or_else(|| PathBuf::from("postgresql.key")),
        ),
        (None, Some(_)) => {
            return Err(TargetError::Tls(
                "sslkey is set but sslcert is not: name the client certificate too (sslcert=FILE)"
                    .into(),
            ));
        }
    };
    let data = read(&cert, "client certificate", "sslcert")?;
    let certs: Vec<_> = rustls_pemfile::certs(&mut &data[..])
        .collect::<Result<_, _>>()
        .map_err(|e| {
            TargetError::Tls(format!("{} is not a PEM certificate: {e}", cert.display()))
        })?;
    if certs.is_empty() {
        return Err(TargetError::Tls(format!(
            "{} holds no PEM certificate (sslcert)",
            cert.display()
        )));
    }
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key)
            .map(|m| m.permissions().mode())
            .unwrap_or(0);
        if mode & 0o077 != 0 {
            return Err(TargetError::Tls(format!(
                "the private key {} may be read by group or others (mode {:o}): chmod 600 it, as libpq requires",
                key.display(),
                mode & 0o777
            )));
        }
    }
    let data = read(&key, "client key", "sslkey")?;
    let key_der = rustls_pemfile::private_key(&mut &data[..])
        .map_err(|e| TargetError::Tls(format!("{}: {e}", key.display())))?
        .ok_or_else(|| {
            TargetError::Tls(format!(
                "{} holds no PEM private key (sslkey)",
                key.display()
            ))
        })?;
    Ok(Some((certs, key_der)))
}
