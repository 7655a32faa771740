/* httpget.c - one HTTP/1.0 GET over a TCP socket to a local server (httpget.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/clock.h"
#include "tests/lib/httpget.h"

long http_now_ms(void)
{
	return (long)(now_ns() / 1000000);
}

int http_get(const char *addr, const char *page, long deadline, char **body, char *why, size_t whylen)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char req[256], head[16] = "", buf[65536], *all = NULL;
	unsigned port = 0;
	size_t got = 0;
	int fd, ret = -1;

	if (sscanf(addr, "127.0.0.1:%u", &port) != 1 || !port || port > 65535) {
		snprintf(why, whylen, "viewer listens on an unexpected address '%s'", addr);
		return -1;
	}
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(why, whylen, "GET %s: connect: %s", page, strerror(errno));
		goto out;
	}
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", page, addr);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		snprintf(why, whylen, "GET %s: write: %s", page, strerror(errno));
		goto out;
	}
	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		long left = deadline - http_now_ms();
		ssize_t r;

		if (left <= 0) {
			snprintf(why, whylen, "GET %s: timed out", page);
			goto out;
		}
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR) {
			snprintf(why, whylen, "GET %s: poll: %s", page, strerror(errno));
			goto out;
		}
		r = read(fd, buf, sizeof(buf));
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0) {
			snprintf(why, whylen, "GET %s: %s (the page crashed?)", page, strerror(errno));
			goto out;
		}
		if (!r)
			break;
		if (body) {
			char *n = realloc(all, got + (size_t)r + 1);

			if (!n) {
				snprintf(why, whylen, "GET %s: out of memory", page);
				goto out;
			}
			all = n;
			memcpy(all + got, buf, (size_t)r);
			all[got + (size_t)r] = '\0';
		}
		if (got < sizeof(head) - 1) {
			size_t n = (size_t)r < sizeof(head) - 1 - got ? (size_t)r : sizeof(head) - 1 - got;

			memcpy(head + got, buf, n);
			head[got + n] = '\0';
		}
		got += (size_t)r;
	}
	if (strncmp(head, "HTTP/1.0 200", 12) && strncmp(head, "HTTP/1.1 200", 12)) {
		snprintf(why, whylen, "GET %s: %s", page, got ? head : "no answer (the page crashed?)");
		goto out;
	}
	ret = 0;
	if (body) {
		*body = all;
		all = NULL;
	}
out:
	free(all);
	if (fd >= 0)
		close(fd);
	return ret;
}
