// One encrypted flow through the JDK's java.net.http.HttpClient with its
// defaults: HTTP/2 first (ALPN h2 over TLS; over http://, an HTTP/1.1
// request carrying Upgrade: h2c), one client, so one connection where the
// protocol allows. Only the trust is configured: the edge's root
// certificate, over TLS. The flow is an encrypted login, an encrypted
// upload, then encrypted retrieves of the record, all in the compact
// serialization; every answer is decrypted.
//
// The JDK has no JOSE library, so the envelopes are made and opened here
// with javax.crypto as RFC 7518 §5.2.2 describes A128CBC-HS256 (the MAC
// key is the first half of the content key, the AES key the second). The
// point of this client is the transport.
//
//   java JdkClient.java     settings in HDC_FLOW_* (tests/transport_test.go),
//                           a JSON summary on stdout
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static java.nio.charset.StandardCharsets.UTF_8;

public class JdkClient {
    static final Base64.Encoder B64URL = Base64.getUrlEncoder().withoutPadding();
    static final Base64.Decoder UNB64URL = Base64.getUrlDecoder();

    final HttpClient http;
    final String base, kid;
    final byte[] macKey, encKey;
    final List<Integer> statuses = new ArrayList<>();
    final List<String> versions = new ArrayList<>();

    JdkClient(HttpClient http, String base, String kid, String shared) {
        this.http = http;
        this.base = base;
        this.kid = kid;
        byte[] key = (shared + shared).getBytes(UTF_8);
        this.macKey = Arrays.copyOfRange(key, 0, 16);
        this.encKey = Arrays.copyOfRange(key, 16, 32);
    }

    public static void main(String[] args) throws Exception {
        String ca = System.getenv("HDC_FLOW_CA");
        HttpClient.Builder builder = HttpClient.newBuilder();
        if (ca != null && !ca.isEmpty()) {
            builder.sslContext(trusting(Path.of(ca)));
        }
        JdkClient c = new JdkClient(builder.build(), System.getenv("HDC_FLOW_BASE"),
                System.getenv("HDC_FLOW_KID"), System.getenv("HDC_FLOW_KEY"));
        String login = c.send("POST", "/connect-auth/v1/account/login", null, String.format(
                "{\"client_id\":\"%s\",\"client_secret\":\"%s\"}",
                System.getenv("HDC_FLOW_CLIENT_ID"), System.getenv("HDC_FLOW_CLIENT_SECRET")));
        String token = member(login, "access_token");
        byte[] file = Files.readAllBytes(Path.of(System.getenv("HDC_FLOW_FILE")));
        String upload = c.send("POST", "/mr/api/v2/docs", token,
                "{\"file\":\"" + Base64.getEncoder().encodeToString(file) + "\"}");
        String record = member(upload, "care_context_id");
        String bundle = "";
        int retrieves = Integer.parseInt(System.getenv("HDC_FLOW_RETRIEVES"));
        for (int i = 0; i < retrieves; i++) {
            bundle = c.send("GET", "/health/api/v1/fhir/retrieve?identifier="
                    + URLEncoder.encode(record, UTF_8), token, null);
        }
        System.out.printf("{\"statuses\":%s,\"versions\":[\"%s\"],\"care_context_id\":\"%s\",\"bundle\":%s}%n",
                c.statuses, String.join("\",\"", c.versions), record, bundle);
    }

    // send makes one encrypted request and returns its decrypted answer.
    String send(String method, String path, String token, String body) throws Exception {
        HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(Duration.ofSeconds(30))
                .header("X-Encryption", "JWE");
        if (token != null) {
            req.header("Authorization", "Bearer " + token);
        }
        if (body == null) {
            req.header("X-Encryption-Kid", kid).header("Accept", "application/jose").GET();
        } else {
            req.header("Content-Type", "application/jose")
                    .method(method, HttpRequest.BodyPublishers.ofString(seal(body.getBytes(UTF_8)), US_ASCII));
        }
        HttpResponse<String> resp = http.send(req.build(), HttpResponse.BodyHandlers.ofString(US_ASCII));
        statuses.add(resp.statusCode());
        versions.add(resp.version().toString());
        if (resp.statusCode() != 200) {
            throw new IllegalStateException(method + " " + path + ": " + resp.statusCode() + " " + resp.body());
        }
        return new String(open(resp.body().trim()), UTF_8);
    }

    String seal(byte[] plaintext) throws Exception {
        String header = B64URL.encodeToString(String.format(
                "{\"alg\":\"dir\",\"enc\":\"A128CBC-HS256\",\"kid\":\"%s\"}", kid).getBytes(UTF_8));
        byte[] iv = new byte[16];
        new SecureRandom().nextBytes(iv);
        Cipher aes = Cipher.getInstance("AES/CBC/PKCS5Padding");
        aes.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(encKey, "AES"), new IvParameterSpec(iv));
        byte[] ciphertext = aes.doFinal(plaintext);
        return header + ".." + B64URL.encodeToString(iv) + "." + B64URL.encodeToString(ciphertext) + "."
                + B64URL.encodeToString(tag(header, iv, ciphertext));
    }

    byte[] open(String compact) throws Exception {
        String[] parts = compact.split("\\.", -1);
        if (parts.length != 5 || !parts[1].isEmpty()) {
            throw new IllegalStateException("not a compact envelope of alg dir");
        }
        byte[] iv = UNB64URL.decode(parts[2]), ciphertext = UNB64URL.decode(parts[3]);
        if (!MessageDigest.isEqual(tag(parts[0], iv, ciphertext), UNB64URL.decode(parts[4]))) {
            throw new IllegalStateException("the answer's tag does not verify");
        }
        Cipher aes = Cipher.getInstance("AES/CBC/PKCS5Padding");
        aes.init(Cipher.DECRYPT_MODE, new SecretKeySpec(encKey, "AES"), new IvParameterSpec(iv));
        return aes.doFinal(ciphertext);
    }

    // tag is the first half of HMAC-SHA-256 over the AAD (the protected
    // header as sent), the IV, the ciphertext and the AAD's length in bits.
    byte[] tag(String aad, byte[] iv, byte[] ciphertext) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(macKey, "HmacSHA256"));
        byte[] a = aad.getBytes(US_ASCII);
        mac.update(a);
        mac.update(iv);
        mac.update(ciphertext);
        mac.update(ByteBuffer.allocate(8).putLong(8L * a.length).array());
        return Arrays.copyOf(mac.doFinal(), 16);
    }

    static String member(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\"\\s*:\\s*\"([^\"]+)\"").matcher(json);
        if (!m.find()) {
            throw new IllegalStateException("no " + name + " in " + json);
        }
        return m.group(1);
    }

    static SSLContext trusting(Path pem) throws Exception {
        KeyStore roots = KeyStore.getInstance(KeyStore.getDefaultType());
        roots.load(null, null);
        roots.setCertificateEntry("edge", CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(Files.readAllBytes(pem))));
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(roots);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }
}
