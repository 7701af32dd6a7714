//! TLS for `sslmode` with rustls (no OpenSSL at run time).
//!
//! - `require` (no root certificate) and `prefer`/`allow`: encrypt, do not verify — as libpq.
//! - `require` with a root certificate file present, and `verify-ca`: verify the chain, not
//!   the host name.
//! - `verify-full`: verify the chain and that the certificate names the host.
//!
//! Roots come from `sslrootcert` (or `~/.postgresql/root.crt`); `sslrootcert=system` uses the
//! Mozilla roots shipped in `webpki-roots`. A verified chain is also checked against
//! `sslcrl` (or `~/.postgresql/root.crl`); `sslcert`/`sslkey` (or `~/.postgresql/
//! postgresql.crt`/`.key`) are sent when the server asks for a client certificate
//! ([`super::tls_files`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, Error as TlsError, RootCertStore, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::TargetError;
use super::conninfo::{ConnParams, SslMode};

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The root certificate file libpq would use when `sslrootcert` is not given.
pub(crate) fn default_root_cert() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|b| b.home_dir().join(".postgresql/root.crt"))
}

fn load_roots(path: &Path) -> Result<RootCertStore, TargetError> {
    let mut roots = RootCertStore::empty();
    if path.as_os_str() == "system" {
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        return Ok(roots);
    }
    let data = std::fs::read(path).map_err(|e| {
        TargetError::Tls(format!(
            "cannot read the root certificate {}: {e} (set sslrootcert=FILE, or sslmode=require to skip verification)",
            path.display()
        ))
    })?;
    let mut reader = std::io::BufReader::new(&data[..]);
    for cert in rustls_pemfile::certs(&mut reader) {
        let cert = cert.map_err(|e| {
            TargetError::Tls(format!(
                "{} is not a PEM certificate file: {e}",
                path.display()
            ))
        })?;
        roots.add(cert).map_err(|e| {
            TargetError::Tls(format!("{}: unusable certificate: {e}", path.display()))
        })?;
    }
    if roots.is_empty() {
        return Err(TargetError::Tls(format!(
            "{} holds no PEM certificate",
            path.display()
        )));
    }
    Ok(roots)
}

/// Build the TLS connector for the target's `sslmode`, root certificate, revocation list
/// and client certificate. `None` means plain TCP only (`disable`).
pub(crate) fn connector(params: &ConnParams) -> Result<Option<MakeRustlsConnect>, TargetError> {
    let mode = params.sslmode;
    let explicit = params.sslrootcert.clone();
    let default = default_root_cert().filter(|p| p.is_file());
    let crls = super::tls_files::crls(params.sslcrl.as_deref())?;
    let webpki = |p: &Path| webpki(p, crls.clone());
    let verifier: Arc<dyn ServerCertVerifier> = match mode {
        SslMode::Disable => return Ok(None),
        SslMode::Allow | SslMode::Prefer => Arc::new(NoVerify(provider())),
        SslMode::Require => match explicit.or(default) {
            Some(p) => Arc::new(ChainOnly(webpki(&p)?)),
            None => Arc::new(NoVerify(provider())),
        },
        SslMode::VerifyCa | SslMode::VerifyFull => {
            let p = explicit.or(default).ok_or_else(|| {
                TargetError::Tls(format!(
                    "sslmode={} needs a root certificate: set sslrootcert=FILE (or put it in ~/.postgresql/root.crt)",
                    mode.as_str()
                ))
            })?;
            let v = webpki(&p)?;
            if mode == SslMode::VerifyCa {
                Arc::new(ChainOnly(v))
            } else {
                v
            }
        }
    };
    let config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| TargetError::Tls(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let config = match super::tls_files::client_cert(params)? {
        Some((certs, key)) => config.with_client_auth_cert(certs, key).map_err(|e| {
            TargetError::Tls(format!(
                "the client certificate and key (sslcert, sslkey) do not go together: {e}"
            ))
        })?,
        None => config.with_no_client_auth(),
    };
    Ok(Some(MakeRustlsConnect::new(config)))
}

fn webpki(
    path: &Path,
    crls: Vec<rustls::pki_types::CertificateRevocationListDer<'static>>,
) -> Result<Arc<WebPkiServerVerifier>, TargetError> {
    WebPkiServerVerifier::builder_with_provider(Arc::new(load_roots(path)?), provider())
        .with_crls(crls)
        .build()
        .map_err(|e| TargetError::Tls(format!("root certificates in {}: {e}", path.display())))
}

/// Encrypts without checking who is on the other end (libpq's `require` without a root cert).
#[derive(Debug)]
struct NoVerify(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Verifies the certificate chain but accepts any host name (libpq's `verify-ca`).
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Ok(v) => Ok(v),
            Err(TlsError::InvalidCertificate(rustls::CertificateError::NotValidForName))
            | Err(TlsError::InvalidCertificate(
                rustls::CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            Err(e) => Err(e),
        }
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        self.0.verify_tls12_signature(message, cert, dss)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        self.0.verify_tls13_signature(message, cert, dss)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}
