/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Name and format checks of k8s.io/apimachinery/pkg/util/validation, with
 * its messages word for word (users grep for them).
 */
#include "api/api_internal.h"

#include "util/cleanup.h"
#include "util/xalloc.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <string.h>

#define DNS1123_LABEL_FMT "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#define DNS1123_SUBDOMAIN_FMT DNS1123_LABEL_FMT "(\\." DNS1123_LABEL_FMT ")*"
#define LABEL_KEY_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define LABEL_KEY_MSG                                                                              \
        "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "   \
        "an alphanumeric character (e.g. 'MyName' or 'my.name' or '123-abc', regex used for "      \
        "validation is '" LABEL_KEY_FMT "')"

static const char DNS1123_LABEL_MSG[] =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name' or '123-abc', "
    "regex used for validation is '" DNS1123_LABEL_FMT "')";
static const char DNS1123_SUBDOMAIN_MSG[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is '" DNS1123_SUBDOMAIN_FMT "')";
static const char LABEL_VALUE_MSG[] =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue' or "
    "'my_value' or '12345', regex used for validation is '(" LABEL_KEY_FMT ")?')";
static const char CONFIG_MAP_KEY_MSG[] =
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
    "'key.name' or 'KEY_NAME' or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

static bool lower_alnum(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool alnum(char c)
{
        return isalnum((unsigned char)c) != 0;
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? over s[0..n) */
static bool label_span(const char *s, size_t n)
{
        if (n == 0 || !lower_alnum(s[0]) || !lower_alnum(s[n - 1]))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!lower_alnum(s[i]) && s[i] != '-')
                        return false;
        return true;
}

bool is_dns1123_label(const char *s)
{
        return label_span(s, strlen(s));
}

bool is_dns1123_subdomain(const char *s)
{
        const char *p = s;
        for (;;) {
                const char *dot = strchr(p, '.');
                size_t n = dot ? (size_t)(dot - p) : strlen(p);
                if (!label_span(p, n))
                        return false;
                if (!dot)
                        return true;
                p = dot + 1;
        }
}

static void max_len(struct dctx *d, const char *path, const char *value, size_t max)
{
        if (strlen(value) > max) {
                cleanup_free char *msg = xasprintf("must be no more than %zu characters", max);
                ferr_invalid(d, path, value, msg);
        }
}

void validate_dns1123_label(struct dctx *d, const char *path, const char *value)
{
        max_len(d, path, value, 63);
        if (!is_dns1123_label(value))
                ferr_invalid(d, path, value,
                             is_dns1123_subdomain(value) ? "must not contain dots"
                                                         : DNS1123_LABEL_MSG);
}

void validate_dns1123_subdomain(struct dctx *d, const char *path, const char *value)
{
        max_len(d, path, value, 253);
        if (!is_dns1123_subdomain(value))
                ferr_invalid(d, path, value, DNS1123_SUBDOMAIN_MSG);
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] */
static bool label_key_name(const char *s, size_t n)
{
        if (n == 0 || !alnum(s[0]) || !alnum(s[n - 1]))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
                        return false;
        return true;
}

void validate_qualified_name(struct dctx *d, const char *path, const char *value)
{
        validate_qualified_name_shown(d, path, value, value);
}

void validate_qualified_name_shown(struct dctx *d, const char *path, const char *value,
                                   const char *shown)
{
        const char *slash = strchr(value, '/');
        if (slash && strchr(slash + 1, '/')) {
                ferr_invalid(d, path, shown,
                             "a valid label key " LABEL_KEY_MSG " with an optional DNS subdomain "
                             "prefix and '/' (e.g. 'example.com/MyName')");
                return;
        }
        const char *name = value;
        if (slash) {
                cleanup_free char *prefix = xstrndup(value, (size_t)(slash - value));
                name = slash + 1;
                if (prefix[0] == '\0') {
                        ferr_invalid(d, path, shown, "prefix part must be non-empty");
                } else {
                        if (strlen(prefix) > 253)
                                ferr_invalid(d, path, shown,
                                             "prefix part must be no more than 253 characters");
                        if (!is_dns1123_subdomain(prefix)) {
                                cleanup_free char *m =
                                    xasprintf("prefix part %s", DNS1123_SUBDOMAIN_MSG);
                                ferr_invalid(d, path, shown, m);
                        }
                }
        }
        size_t n = strlen(name);
        if (n == 0)
                ferr_invalid(d, path, shown, "name part must be non-empty");
        else if (n > 63)
                ferr_invalid(d, path, shown, "name part must be no more than 63 characters");
        if (!label_key_name(name, n))
                ferr_invalid(d, path, shown, "name part " LABEL_KEY_MSG);
}

void validate_label_value(struct dctx *d, const char *path, const char *value)
{
        max_len(d, path, value, 63);
        size_t n = strlen(value);
        if (n > 0 && !label_key_name(value, n))
                ferr_invalid(d, path, value, LABEL_VALUE_MSG);
}

void validate_port_name(struct dctx *d, const char *path, const char *value)
{
        size_t n = strlen(value);
        if (n > 15)
                ferr_invalid(d, path, value, "must be no more than 15 characters");
        bool charset = n > 0, letter = false;
        for (size_t i = 0; i < n; i++) {
                if (!lower_alnum(value[i]) && value[i] != '-')
                        charset = false;
                if (value[i] >= 'a' && value[i] <= 'z')
                        letter = true;
        }
        if (!charset)
                ferr_invalid(d, path, value,
                             "must contain only alpha-numeric characters (a-z, 0-9), and hyphens "
                             "(-)");
        if (!letter)
                ferr_invalid(d, path, value, "must contain at least one letter (a-z)");
        if (strstr(value, "--"))
                ferr_invalid(d, path, value, "must not contain consecutive hyphens");
        if (n > 0 && (value[0] == '-' || value[n - 1] == '-'))
                ferr_invalid(d, path, value, "must not begin or end with a hyphen");
}

/* IsRelaxedEnvVarName (RelaxedEnvironmentVariableValidation is GA). */
void validate_env_var_name(struct dctx *d, const char *path, const char *value)
{
        if (value[0] == '\0')
                ferr_invalid(d, path, value, "environment variable name must be non-empty");
        for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
                if (*p < 0x20 || *p > 0x7e || *p == '=') {
                        ferr_invalid(d, path, value,
                                     "a valid environment variable name must consist only of "
                                     "printable ASCII characters other than '='");
                        break;
                }
        }
}

void validate_config_map_key(struct dctx *d, const char *path, const char *value)
{
        max_len(d, path, value, 253);
        bool ok = value[0] != '\0';
        for (const char *p = value; *p; p++)
                if (!alnum(*p) && *p != '-' && *p != '.' && *p != '_')
                        ok = false;
        if (!ok)
                ferr_invalid(d, path, value, CONFIG_MAP_KEY_MSG);
        if (strcmp(value, ".") == 0)
                ferr_invalid(d, path, value, "must not be '.'");
        else if (strcmp(value, "..") == 0)
                ferr_invalid(d, path, value, "must not be '..'");
        else if (strncmp(value, "..", 2) == 0)
                ferr_invalid(d, path, value, "must not start with '..'");
}

/* netutils.ParseIPSloppy: IPv4 octets may carry leading zeros. */
static bool is_ip_sloppy(const char *s)
{
        if (strchr(s, ':')) {
                unsigned char buf[16];
                return inet_pton(AF_INET6, s, buf) == 1;
        }
        int parts = 0;
        const char *p = s;
        for (;;) {
                int v = 0, digits = 0;
                while (*p >= '0' && *p <= '9') {
                        v = v * 10 + (*p++ - '0');
                        if (++digits > 3)
                                return false;
                }
                if (digits == 0 || v > 255)
                        return false;
                parts++;
                if (*p == '\0')
                        return parts == 4;
                if (*p != '.' || parts == 4)
                        return false;
                p++;
        }
}

void validate_ip(struct dctx *d, const char *path, const char *value)
{
        if (!is_ip_sloppy(value))
                ferr_invalid(d, path, value,
                             "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)");
}

/* ([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])? */
bool is_sysctl_name(const char *s)
{
        size_t n = strlen(s);
        if (n == 0 || n > 253)
                return false;
        size_t start = 0;
        for (size_t i = 0; i <= n; i++) {
                if (i == n || s[i] == '.' || s[i] == '/') {
                        size_t len = i - start;
                        if (len == 0 || !lower_alnum(s[start]) || !lower_alnum(s[i - 1]))
                                return false;
                        for (size_t j = start; j < i; j++)
                                if (!lower_alnum(s[j]) && s[j] != '-' && s[j] != '_')
                                        return false;
                        start = i + 1;
                }
        }
        return true;
}

/* _?[a-z0-9]([-_a-z0-9]*[a-z0-9])? */
static bool label_underscore_span(const char *s, size_t n)
{
        if (n > 0 && s[0] == '_')
                s++, n--;
        if (n == 0 || !lower_alnum(s[0]) || !lower_alnum(s[n - 1]))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!lower_alnum(s[i]) && s[i] != '-' && s[i] != '_')
                        return false;
        return true;
}

void validate_dns1123_subdomain_underscore(struct dctx *d, const char *path, const char *value)
{
        max_len(d, path, value, 253);
        bool ok = true;
        const char *p = value;
        for (;;) {
                const char *dot = strchr(p, '.');
                size_t n = dot ? (size_t)(dot - p) : strlen(p);
                if (!label_underscore_span(p, n))
                        ok = false;
                if (!dot)
                        break;
                p = dot + 1;
        }
        if (!ok)
                ferr_invalid(
                    d, path, value,
                    "a lowercase RFC 1123 subdomain must consist of lower case "
                    "alphanumeric characters, '_', '-' or '.', and must start and end "
                    "with an alphanumeric character (e.g. 'example.com', regex used for "
                    "validation is '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\\._?[a-z0-9]([-_a-z0-"
                    "9]*[a-z0-9])?)*')");
}

bool is_http_header_name(const char *s)
{
        if (*s == '\0')
                return false;
        for (; *s; s++)
                if (!alnum(*s) && *s != '-')
                        return false;
        return true;
}
