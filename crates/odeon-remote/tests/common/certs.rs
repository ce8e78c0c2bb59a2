//! A throwaway certificate authority for TLS tests (rcgen, made at test time).

use odeon_remote::transport::TlsConfig;
use rcgen::{
    BasicConstraints, Certificate, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};

/// A CA that signs node certificates.
pub struct Ca {
    pub cert: Certificate,
    issuer: Issuer<'static, KeyPair>,
}

impl Ca {
    pub fn new(name: &str) -> Self {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let cert = params.self_signed(&key).unwrap();
        Self {
            cert,
            issuer: Issuer::new(params, key),
        }
    }

    pub fn pem(&self) -> Vec<u8> {
        self.cert.pem().into_bytes()
    }

    /// A node's certificate and key (PEM) for `san`, usable as server and as client.
    pub fn node(&self, node: &str, san: &str) -> (Vec<u8>, Vec<u8>) {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec![san.to_owned()]).unwrap();
        params.distinguished_name.push(DnType::CommonName, node);
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (cert.pem().into_bytes(), key.serialize_pem().into_bytes())
    }

    /// TLS for a node whose certificate this CA signed and which trusts `trusted`.
    pub fn tls(&self, node: &str, trusted: &Ca) -> TlsConfig {
        let (cert, key) = self.node(node, TlsConfig::DEFAULT_SERVER_NAME);
        TlsConfig::from_pem(&cert, &key, &trusted.pem()).unwrap()
    }
}
